// Directory payloads' archives (daemon/store/directory_archive.h): a tree packs and unpacks to
// the same tree; what cannot mean the same on every member is refused when packing; and an
// archive from a hostile source cannot write outside the directory it unpacks into.
#include "daemon/store/directory_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

class DirectoryArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("gridcast-archive");
    fs::create_directories(dir_ / "tree");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const fs::path& relative, const std::string& bytes) {
    fs::create_directories((dir_ / "tree" / relative).parent_path());
    std::ofstream(dir_ / "tree" / relative, std::ios::binary) << bytes;
  }

  // Every entry below `root`: path -> "file:<bytes>", "dir" or "link:<target>".
  static std::map<std::string, std::string> Listing(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      const std::string relative = fs::relative(it->path(), root).string();
      if (it->is_symlink()) {
        out[relative] = "link:" + fs::read_symlink(it->path()).string();
      } else if (it->is_directory()) {
        out[relative] = "dir";
      } else {
        std::ifstream in(it->path(), std::ios::binary);
        out[relative] = "file:" + std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      }
    }
    return out;
  }

  // An archive written entry by entry, as a hostile source could.
  void WriteArchive(const fs::path& path, const std::function<void(struct archive*)>& entries) {
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
    entries(a);
    archive_write_close(a);
    archive_write_free(a);
  }
  static void AddEntry(struct archive* a, const char* name, mode_t type, const std::string& data = "",
                       const char* link = nullptr, const char* hardlink = nullptr) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, 0644);
    if (link != nullptr) archive_entry_set_symlink(e, link);
    if (hardlink != nullptr) archive_entry_set_hardlink(e, hardlink);
    archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
    archive_write_header(a, e);
    if (!data.empty()) archive_write_data(a, data.data(), data.size());
    archive_entry_free(e);
  }

  fs::path dir_;
};

TEST_F(DirectoryArchiveTest, ATreePacksAndUnpacksToTheSameTree) {
  Write("a.bin", std::string(3 << 20, 'x') + "end");
  Write("empty", "");
  Write("spaced \u00e9 \u6587\u4ef6/inner.txt", "hello");
  Write("deep/er/still/file", "deep");
  fs::create_directories(dir_ / "tree" / "empty-dir");
  fs::create_symlink("deep/er", dir_ / "tree" / "link-to-dir");
  fs::create_symlink("../a.bin", dir_ / "tree" / "deep" / "up-one");
  fs::create_directories(dir_ / "tree" / "sticky");
  fs::permissions(dir_ / "tree" / "sticky", fs::perms::sticky_bit, fs::perm_options::add);
  fs::permissions(dir_ / "tree" / "a.bin", fs::perms::owner_read | fs::perms::owner_exec);
  // Times long past, so that an entry whose time unpacking did not set reads differently.
  const struct timespec past[2] = {{1000000000, 0}, {1000000000, 0}};
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "tree")) {
    ASSERT_EQ(utimensat(AT_FDCWD, entry.path().c_str(), past, AT_SYMLINK_NOFOLLOW), 0) << entry.path();
  }
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "t.tar").ok());
  const Status unpacked = UnpackDirectory(dir_ / "t.tar", dir_ / "copy");
  ASSERT_TRUE(unpacked.ok()) << unpacked.message();
  EXPECT_EQ(Listing(dir_ / "copy"), Listing(dir_ / "tree"));
  EXPECT_EQ(fs::status(dir_ / "copy" / "a.bin").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_NE(fs::status(dir_ / "copy" / "sticky").permissions() & fs::perms::sticky_bit, fs::perms::none);
  // The same tree gives the same bytes (entries sorted, no owners).
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "again.tar").ok());
  EXPECT_EQ(Listing(dir_).at("t.tar"), Listing(dir_).at("again.tar"));
  // And the unpacked copy reads as the archive it came from, the times of its directories and
  // links included: what a re-staging member searches.
  Result<std::unique_ptr<ByteSource>> copy = ReadDirectoryAsArchive(dir_ / "copy");
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  std::vector<uint8_t> bytes((*copy)->size());
  ASSERT_TRUE((*copy)->ReadAt(0, bytes).ok());
  EXPECT_EQ("file:" + std::string(bytes.begin(), bytes.end()), Listing(dir_).at("t.tar"));
}

// Unpacking over an earlier tree links each file it holds unchanged (the same inode: nothing
// written) and writes the rest, including a file equal only up to a point and one whose bytes
// are equal but whose mode is not.
TEST_F(DirectoryArchiveTest, FilesTheEarlierTreeHoldsUnchangedAreLinkedNotWritten) {
  Write("same.bin", std::string(3 << 20, 's'));
  Write("tail-changed.bin", std::string(2 << 20, 't') + "old");
  Write("mode-changed.bin", "mode");
  Write("empty", "");
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "v1.tar").ok());
  ASSERT_TRUE(UnpackDirectory(dir_ / "v1.tar", dir_ / "held").ok());
  std::ofstream(dir_ / "tree" / "tail-changed.bin", std::ios::binary | std::ios::trunc)
      << std::string(2 << 20, 't') + "new";
  // The same size and time: only the bytes, compared as they are unpacked, tell it apart.
  fs::last_write_time(dir_ / "tree" / "tail-changed.bin", fs::last_write_time(dir_ / "held" / "tail-changed.bin"));
  fs::permissions(dir_ / "tree" / "mode-changed.bin", fs::perms::owner_read);
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "v2.tar").ok());
  const Status unpacked = UnpackDirectory(dir_ / "v2.tar", dir_ / "copy", dir_ / "held");
  ASSERT_TRUE(unpacked.ok()) << unpacked.message();
  EXPECT_EQ(Listing(dir_ / "copy"), Listing(dir_ / "tree"));
  auto inode = [](const fs::path& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  EXPECT_EQ(inode(dir_ / "copy" / "same.bin"), inode(dir_ / "held" / "same.bin"));
  EXPECT_EQ(inode(dir_ / "copy" / "empty"), inode(dir_ / "held" / "empty"));
  EXPECT_NE(inode(dir_ / "copy" / "tail-changed.bin"), inode(dir_ / "held" / "tail-changed.bin"));
  EXPECT_NE(inode(dir_ / "copy" / "mode-changed.bin"), inode(dir_ / "held" / "mode-changed.bin"));
  // The earlier tree's bytes are as they were.
  EXPECT_EQ(Listing(dir_ / "held").at("tail-changed.bin"), "file:" + std::string(2 << 20, 't') + "old");
}

// A re-staging member reads its tree as the archive that packs it, without writing one: every
// byte equals PackDirectory's, read whole or in any pieces (headers with long and non-ASCII
// names, files of every padding, empty ones, links, directories), and a file changed since is
// read as it is now, one gone or shorter as zeros, never past what was laid out.
TEST_F(DirectoryArchiveTest, ATreeReadAsItsArchiveHasTheArchivesBytes) {
  std::string mixed;
  for (int i = 0; i < (1 << 20) + 7; ++i) mixed.push_back(static_cast<char>((i * 131 + i / 977) & 0xff));
  Write("a.bin", mixed);
  Write("zeros.bin", std::string(70000, '\0'));
  Write("empty", "");
  for (int size : {1, 511, 512, 513, 1023, 1024, 10240, 10241}) {
    Write("sizes/f" + std::to_string(size), std::string(static_cast<size_t>(size), 'p'));
  }
  Write(std::string(150, 'n') + "/" + std::string(120, 'm') + ".txt", "a long name, in a pax record");
  Write("spaced \u00e9 \u6587\u4ef6/inner.txt", "hello");
  fs::create_directories(dir_ / "tree" / "empty-dir");
  fs::create_symlink("sizes/f1", dir_ / "tree" / "link");
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "t.tar").ok());
  const std::string packed_text = Listing(dir_).at("t.tar").substr(5);
  const std::vector<uint8_t> packed(packed_text.begin(), packed_text.end());

  Result<std::unique_ptr<ByteSource>> archive = ReadDirectoryAsArchive(dir_ / "tree");
  ASSERT_TRUE(archive.ok()) << archive.status().message();
  const ByteSource& read = **archive;
  ASSERT_EQ(read.size(), packed.size());
  std::vector<uint8_t> whole(packed.size());
  ASSERT_TRUE(read.ReadAt(0, whole).ok());
  EXPECT_TRUE(std::equal(whole.begin(), whole.end(), packed.begin()));
  // Pieces of every length across every boundary, out of order.
  uint64_t state = 7;
  for (int i = 0; i < 2000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t at = (state >> 20) % packed.size();
    const uint64_t length = std::min<uint64_t>((state >> 44) % 4096, packed.size() - at);
    std::vector<uint8_t> piece(length);
    ASSERT_TRUE(read.ReadAt(at, piece).ok());
    ASSERT_TRUE(std::equal(piece.begin(), piece.end(), packed.begin() + static_cast<ptrdiff_t>(at))) << at;
  }
  std::vector<uint8_t> past(2);
  EXPECT_FALSE(read.ReadAt(packed.size() - 1, past).ok());

  // Changed since: read as it is now; shorter: zeros past its end; replaced by another file or
  // by a FIFO (which must not block the read): zeros.
  const auto contents = std::search(packed.begin(), packed.end(), mixed.begin(), mixed.begin() + 4096,
                                    [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); });
  ASSERT_NE(contents, packed.end());
  const auto at = contents - packed.begin();
  auto a_bin = [&] { return std::string(whole.begin() + at, whole.begin() + at + static_cast<ptrdiff_t>(mixed.size())); };
  std::ofstream(dir_ / "tree" / "a.bin", std::ios::binary | std::ios::trunc) << std::string(mixed.size(), 'c');
  ASSERT_TRUE(read.ReadAt(0, whole).ok());
  EXPECT_TRUE(a_bin() == std::string(mixed.size(), 'c'));
  std::ofstream(dir_ / "tree" / "a.bin", std::ios::binary | std::ios::trunc) << "short";
  ASSERT_TRUE(read.ReadAt(0, whole).ok());
  EXPECT_TRUE(a_bin() == "short" + std::string(mixed.size() - 5, '\0'));
  std::ofstream(dir_ / "tree" / "a.bin.new", std::ios::binary) << mixed;  // made while a.bin is there: another inode
  fs::rename(dir_ / "tree" / "a.bin.new", dir_ / "tree" / "a.bin");
  ASSERT_TRUE(read.ReadAt(0, whole).ok());
  EXPECT_TRUE(a_bin() == std::string(mixed.size(), '\0'));
  fs::remove(dir_ / "tree" / "a.bin");
  ASSERT_EQ(mkfifo((dir_ / "tree" / "a.bin").c_str(), 0600), 0);
  ASSERT_TRUE(read.ReadAt(0, whole).ok());
  EXPECT_TRUE(a_bin() == std::string(mixed.size(), '\0'));
  fs::remove(dir_ / "tree" / "a.bin");

  // What cannot be packed cannot be read as an archive either.
  fs::create_symlink("/etc", dir_ / "tree" / "out");
  EXPECT_FALSE(ReadDirectoryAsArchive(dir_ / "tree").ok());
}

TEST_F(DirectoryArchiveTest, WhatCannotBeSentIsNamedAndNoArchiveIsLeft) {
  Write("ok.txt", "fine");
  fs::create_symlink("../../etc/passwd", dir_ / "tree" / "escape");
  Status packed = PackDirectory(dir_ / "tree", dir_ / "t.tar");
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.message().find("escape is a link to ../../etc/passwd, outside the directory"), std::string::npos)
      << packed.message();
  EXPECT_FALSE(fs::exists(dir_ / "t.tar"));
  fs::remove(dir_ / "tree" / "escape");
  fs::create_symlink("/etc/passwd", dir_ / "tree" / "absolute");
  packed = PackDirectory(dir_ / "tree", dir_ / "t.tar");
  EXPECT_NE(packed.message().find("absolute is a link to /etc/passwd"), std::string::npos) << packed.message();
  fs::remove(dir_ / "tree" / "absolute");
  // Each link reads as inside; together they lead out.
  fs::create_symlink(".", dir_ / "tree" / "p");
  fs::create_symlink("p/..", dir_ / "tree" / "q");
  packed = PackDirectory(dir_ / "tree", dir_ / "t.tar");
  EXPECT_NE(packed.message().find("q is a link that resolves outside the directory"), std::string::npos)
      << packed.message();
  EXPECT_FALSE(fs::exists(dir_ / "t.tar"));
  fs::remove(dir_ / "tree" / "p");
  fs::remove(dir_ / "tree" / "q");
  ASSERT_EQ(mkfifo((dir_ / "tree" / "pipe").c_str(), 0600), 0);
  packed = PackDirectory(dir_ / "tree", dir_ / "t.tar");
  EXPECT_NE(packed.message().find("pipe is a FIFO"), std::string::npos) << packed.message();
  EXPECT_FALSE(fs::exists(dir_ / "t.tar"));
}

TEST_F(DirectoryArchiveTest, AHostileArchiveWritesNothingOutside) {
  const std::vector<std::pair<std::string, std::function<void(struct archive*)>>> cases = {
      {"outside the directory", [](struct archive* a) { AddEntry(a, "../evil", AE_IFREG, "x"); }},
      {"outside the directory", [](struct archive* a) { AddEntry(a, "/tmp/gridcast-evil-abs", AE_IFREG, "x"); }},
      {"link out of the directory", [](struct archive* a) { AddEntry(a, "l", AE_IFLNK, "", "../.."); }},
      {"link out of the directory", [](struct archive* a) { AddEntry(a, "l", AE_IFLNK, "", "/etc"); }},
      {"writes through", [](struct archive* a) {
         AddEntry(a, "l", AE_IFLNK, "", ".");
         AddEntry(a, "l/evil", AE_IFREG, "x");
       }},
      {"hard link", [](struct archive* a) {
         AddEntry(a, "f", AE_IFREG, "x");
         AddEntry(a, "h", AE_IFREG, "", nullptr, "f");
       }},
      {"not a file, directory or link", [](struct archive* a) { AddEntry(a, "dev", AE_IFCHR); }},
      // Each link reads as inside; together they lead out.
      {"resolves outside the directory", [](struct archive* a) {
         AddEntry(a, "p", AE_IFLNK, "", ".");
         AddEntry(a, "q", AE_IFLNK, "", "p/..");
       }},
  };
  for (const auto& [expected, entries] : cases) {
    SCOPED_TRACE(expected);
    fs::remove_all(dir_ / "out");
    fs::create_directories(dir_ / "out");
    WriteArchive(dir_ / "evil.tar", entries);
    const Status unpacked = UnpackDirectory(dir_ / "evil.tar", dir_ / "out" / "copy");
    ASSERT_FALSE(unpacked.ok());
    EXPECT_NE(unpacked.message().find(expected), std::string::npos) << unpacked.message();
    EXPECT_FALSE(fs::exists(dir_ / "out" / "copy"));
    EXPECT_FALSE(fs::exists(dir_ / "out" / "evil"));
    EXPECT_FALSE(fs::exists(dir_ / "evil"));
    EXPECT_FALSE(fs::exists("/tmp/gridcast-evil-abs"));
  }
}

TEST_F(DirectoryArchiveTest, AMemberReplacesItsOldCopyOnlyWithACompleteNewOne) {
  Write("new.txt", "new");
  fs::create_directories(dir_ / "data" / ".gridcast");
  ASSERT_TRUE(PackDirectory(dir_ / "tree", dir_ / "data" / "set.tar").ok());
  fs::create_directories(dir_ / "data" / "set");
  std::ofstream(dir_ / "data" / "set" / "old.txt") << "old";
  Status unpacked = UnpackDirectoryPayload((dir_ / "data").string(), "set.tar", "p1", /*sync=*/true);
  ASSERT_TRUE(unpacked.ok()) << unpacked.message();
  EXPECT_EQ(Listing(dir_ / "data" / "set"), (std::map<std::string, std::string>{{"new.txt", "file:new"}}));
  EXPECT_FALSE(fs::exists(dir_ / "data" / "set.tar"));
  EXPECT_TRUE(fs::is_empty(dir_ / "data" / ".gridcast"));  // no scratch, no old tree left
  // A broken archive leaves the old copy in place.
  std::ofstream(dir_ / "data" / "set.tar") << "not a tar archive";
  unpacked = UnpackDirectoryPayload((dir_ / "data").string(), "set.tar", "p2", /*sync=*/false);
  EXPECT_FALSE(unpacked.ok());
  EXPECT_NE(unpacked.message().find("unpacking set.tar"), std::string::npos) << unpacked.message();
  EXPECT_EQ(Listing(dir_ / "data" / "set"), (std::map<std::string, std::string>{{"new.txt", "file:new"}}));
}

}  // namespace
}  // namespace gridcast
