#pragma once
// Files a user hands us and files we write. Reads check that a path is a readable regular file
// before a parser sees it; writes go to a temporary name first and are renamed into place, so that
// a run stopped by a signal, or a full disk, never leaves a half-written report.
#include <functional>
#include <iosfwd>
#include <string>

namespace wafersim::tb {

// Throws InputError(path, item, ...) unless `path` names an existing regular file we can read.
void check_input_file(const std::string& path, const std::string& item);

// Creates the file's folder and checks that the file can be written there, leaving no file
// behind (a run checks its outputs before it starts). Throws InputError naming `option`.
void check_writable(const std::string& path, const std::string& option);

// Writes a file atomically: `write` fills a temporary file in the same folder, which is then
// renamed to `path` (the folder is created). A path that exists and is not a regular file
// (/dev/null, a pipe) is written in place: renaming over it would replace the device. Throws
// InputError naming `path` (and `option`, when given) when it cannot.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& option = "");
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace wafersim::tb
