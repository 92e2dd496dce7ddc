#!/usr/bin/python3
"""An HTTP(S) origin that misbehaves on request, for http_origin_test.cc.

Serves the files under --root. The path says how (NAME is a file under the root):
  /plain/NAME                 ranges, an ETag and a Last-Modified
  /drop/N/K/NAME              the first K responses end after N body bytes (the connection closes)
  /noranges/N/K/NAME          Range ignored (always 200, whole), and the first K cut after N bytes
  /changing/N/NAME            the first response says ETag "v1" and ends after N bytes; later "v2"
  /bare/N/K/NAME              no ETag, no Last-Modified; the first K cut after N bytes
  /chunked/NAME               no Content-Length (chunked), no ranges
  /slow/RATE/NAME             RATE bytes a second
  /redirect/HOSTPORT/NAME     302 to http://HOSTPORT/plain/NAME
  /status/CODE                that status, with a short body
A query ?rate=BYTES paces any of them (the part before a cut too) to BYTES a second.
Each request is appended to --log as a JSON line: the path and the request's headers. The port
goes to --port-file once the server listens (--port, else one the kernel chooses).
"""
import argparse
import http.server
import json
import os
import ssl
import sys
import threading
import time

counts = {}
lock = threading.Lock()


def count(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        with lock, open(self.server.log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "headers": dict(self.headers.items())}) + "\n")
        parts = self.path.split("?")[0].lstrip("/").split("/")
        kind = parts[0]
        if kind == "status":
            body = b"status page\n"
            self.send_response(int(parts[1]))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if kind == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://%s/plain/%s" % (parts[1], "/".join(parts[2:])))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        args = {"plain": 0, "drop": 2, "noranges": 2, "changing": 1, "bare": 2, "chunked": 0, "slow": 1}.get(kind)
        if args is None:
            self.send_error(404)
            return
        name = "/".join(parts[1 + args:])
        path = os.path.join(self.server.root, name)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as f:
            data = f.read()
        nth = count(self.path)
        cut = None
        if kind in ("drop", "noranges", "bare") and nth <= int(parts[2]):
            cut = int(parts[1])
        if kind == "changing" and nth == 1:
            cut = int(parts[1])
        etag = '"v%d"' % (1 if nth == 1 else 2) if kind == "changing" else '"%d-%d"' % (len(data), 7)
        first = 0
        ranged = self.headers.get("Range")
        if ranged and kind not in ("noranges", "chunked"):
            first = int(ranged.split("=")[1].split("-")[0])
        if kind == "chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for at in range(0, len(data), 65536):
                piece = data[at:at + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        if first > 0:
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - first))
        if kind != "bare":
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", "Sat, 28 Nov 2026 10:00:00 GMT")
        self.end_headers()
        body = data[first:]
        rate = int(parts[1]) if kind == "slow" else None
        query = self.path.split("?")[1] if "?" in self.path else ""
        for pair in query.split("&"):
            if pair.startswith("rate="):
                rate = int(pair[5:])
        if cut is not None:
            body = body[:cut]
            self.close_connection = True
        if rate is None:
            self.wfile.write(body)
        else:
            step = max(1, rate // 20)
            for at in range(0, len(body), step):
                self.wfile.write(body[at:at + step])
                self.wfile.flush()
                time.sleep(step / rate)
        self.wfile.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that hung up (a cancel, a size limit): what the tests do on purpose.
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError)):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.root = args.root
    server.log_path = args.log
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
