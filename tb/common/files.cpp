#include "tb/common/files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "models/common/error.h"

namespace wafersim::tb {

namespace fs = std::filesystem;

void check_input_file(const std::string& path, const std::string& item) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw InputError(path, item, "no such file");
  if (fs::is_directory(status)) throw InputError(path, item, "is a folder, not a file");
  if (!fs::is_regular_file(status) && !fs::is_fifo(status))
    throw InputError(path, item, "is not a regular file");
  if (::access(path.c_str(), R_OK) != 0)
    throw InputError(path, item, std::string("cannot read: ") + std::strerror(errno));
}

namespace {

// Creates the folder of an output file and refuses a folder in its place. Returns whether the file
// is written in place: a device or a pipe (renaming over /dev/null would replace the device).
bool prepare_output(const std::string& path, const std::string& option) {
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(path, option, "cannot write here (" + ec.message() + ")");
  if (fs::is_directory(target, ec)) throw InputError(path, option, "is a folder, not a file");
  return fs::exists(target, ec) && !fs::is_regular_file(target, ec);
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  std::error_code ec;
  const bool in_place = prepare_output(path, option);
  const std::string probe = in_place ? path : path + ".partial";
  const bool writable = static_cast<bool>(std::ofstream(probe, std::ios::app));
  if (!in_place) fs::remove(probe, ec);
  if (!writable) throw InputError(path, option, "cannot write here");
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& option) {
  std::error_code ec;
  const bool in_place = prepare_output(path, option);
  const std::string written = in_place ? path : path + ".partial";
  {
    std::ofstream f(written, std::ios::binary | std::ios::trunc);
    if (f) write(f);
    f.flush();
    if (!f) {
      if (!in_place) fs::remove(written, ec);
      throw InputError(path, option, "cannot write (disk full, or no permission?)");
    }
  }
  if (in_place) return;
  fs::rename(written, path, ec);
  if (ec) {
    fs::remove(written, ec);
    throw InputError(path, option, "cannot write: " + ec.message());
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&content](std::ostream& out) { out << content; });
}

}  // namespace wafersim::tb
