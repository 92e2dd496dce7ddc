/* A C program as a user of the installed package writes it: built with
 * `cc send_buffer.c $(pkg-config --cflags --libs gridcast)`, it broadcasts a buffer from one
 * member and reads it back at another. Usage: send_buffer CLUSTER_FILE SOURCE RECEIVER.
 * Exit 0 when the copy is the buffer. */
#include <gridcast/gridcast.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s CLUSTER_FILE SOURCE RECEIVER\n", argv[0]);
    return 2;
  }
  enum { kSize = 1000003 };
  unsigned char* sent = malloc(kSize);
  unsigned char* received = malloc(kSize);
  if (sent == NULL || received == NULL) return 1;
  for (size_t i = 0; i < kSize; ++i) sent[i] = (unsigned char)(i * 2654435761u >> 13);

  gridcast_client* client = NULL;
  gridcast_broadcast* broadcast = NULL;
  double seconds = 0;
  if (gridcast_open(argv[1], argv[2], &client) != 0 ||
      gridcast_send_buffer_start(client, sent, kSize, "from-package.bin", "chain", &broadcast) != 0 ||
      gridcast_wait(client, broadcast, &seconds) != 0 ||
      gridcast_receive_buffer(client, argv[3], "from-package.bin", received, kSize, 30) != 0) {
    fprintf(stderr, "send_buffer: %s\n", gridcast_last_error(client));
    return 1;
  }
  gridcast_broadcast_free(broadcast);
  gridcast_close(client);
  const int same = memcmp(sent, received, kSize) == 0;
  printf("sent %d bytes in %.3f s; %s's copy %s\n", kSize, seconds, argv[3], same ? "is the buffer" : "differs");
  free(sent);
  free(received);
  return same ? 0 : 1;
}
