// Directory payloads travel as one tar archive (POSIX pax, through libarchive): the source
// packs the directory, the archive is broadcast like any file (chunks, hashes, resume), and
// each member unpacks its verified copy into the directory and drops the archive.
//
// Only what means the same on every member is packed: regular files, directories, and
// symbolic links whose target stays inside the directory (relative, resolved without leaving
// it). Anything else is refused with one line naming it: a link out of the tree or to an
// absolute path, a device, a FIFO, a socket. Unpacking trusts nothing in the archive (a
// member must not let a buggy or hostile source write outside its data directory): the same
// rules are checked again per entry, with `..`, absolute paths, hard links and writes through
// links refused.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gridcast {

// Archive member names end in this; a member unpacks NAME.tar into NAME.
inline constexpr const char* kDirectoryArchiveSuffix = ".tar";

// Packs the tree at `dir` into a new file `archive` (entries in sorted order, owners and
// group names left out, so the same tree gives the same bytes). InvalidArgument naming the
// entry for what cannot be packed; the partial archive is removed on any error.
Status PackDirectory(const std::filesystem::path& dir, const std::filesystem::path& archive);

// Unpacks `archive` into `target` (which must not exist), going through `scratch` (a fresh
// directory on the same file system, renamed to `target` when every entry is in). On error
// `target` does not exist and `scratch` is removed.
Status UnpackDirectory(const std::filesystem::path& archive, const std::filesystem::path& scratch,
                       const std::filesystem::path& target);

// A member's last step for a directory payload: unpacks its verified DATA_DIR/NAME.tar into
// DATA_DIR/NAME, replacing what was there only once the new tree is complete, then removes the
// archive and its recorded chunk list (the directory is the copy now). `tag` (the plan id)
// keeps concurrent unpacks' scratch directories apart. Errors name the archive.
Status UnpackDirectoryPayload(const std::string& data_dir, const std::string& archive_name, const std::string& tag);

}  // namespace gridcast
