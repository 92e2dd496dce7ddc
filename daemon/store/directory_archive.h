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
#include <memory>
#include <string>

#include "delta/byte_source.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Archive member names end in this; a member unpacks NAME.tar into NAME.
inline constexpr const char* kDirectoryArchiveSuffix = ".tar";

// NAME for a directory payload named NAME.tar; InvalidArgument for any other name, or when
// NAME is not a payload name (common/safe_path.h).
Result<std::string> DirectoryOfArchive(const std::string& archive_name);

// Packs the tree at `dir` into a new file `archive` (entries in sorted order, owners and
// group names left out, so the same tree gives the same bytes). InvalidArgument naming the
// entry for what cannot be packed (a link is checked as written and as it resolves, through
// other links); the partial archive is removed on any error.
Status PackDirectory(const std::filesystem::path& dir, const std::filesystem::path& archive);

// The bytes PackDirectory would write for the tree at `dir`, without writing them: the
// entries' headers are laid out now and kept (a few hundred bytes per entry), the files'
// contents are read from the files when asked for. A re-staging member searches its tree
// through this (it keeps the unpacked tree, not the archive). A file changed since is read as
// it is then, one gone, replaced or shorter as zeros: the reader verifies what it reads.
// InvalidArgument naming the entry for what PackDirectory refuses as written (links are not
// followed here, so one that leaves the tree only as it resolves is read as PackDirectory
// would have written it).
Result<std::unique_ptr<ByteSource>> ReadDirectoryAsArchive(const std::filesystem::path& dir);

// Unpacks `archive` into the new directory `into` (anything there first is removed). Every
// link in the result is checked to resolve inside `into`, through other links too. On error
// `into` is removed. `earlier`, when given, is the tree `into` will replace: a file there at
// the same path with the entry's size, mode, modification time and bytes is hard-linked into
// `into` instead of written again (its old name goes with the old tree).
Status UnpackDirectory(const std::filesystem::path& archive, const std::filesystem::path& into,
                       const std::filesystem::path& earlier = {});

// Puts the new tree `scratch` at `target` in one rename, swapping out an older `target` (which
// stays whole until then) and removing it; syncs the file system first when `sync`. On a
// failed rename `scratch` is removed.
Status ReplaceDirectory(const std::filesystem::path& scratch, const std::filesystem::path& target, bool sync);

// A member's last step for a directory payload: unpacks its verified DATA_DIR/NAME.tar into
// a scratch directory (linking the files an older NAME holds unchanged), swaps that with
// DATA_DIR/NAME in one rename (an older NAME stays whole until then, its files' bytes too), syncs the file system when `sync`, and removes the old tree, the archive and
// its recorded chunk list (the directory is the copy now). `tag` (the plan id) keeps
// concurrent unpacks' scratch directories apart. Errors name the archive.
Status UnpackDirectoryPayload(const std::string& data_dir, const std::string& archive_name, const std::string& tag,
                              bool sync);

}  // namespace gridcast
