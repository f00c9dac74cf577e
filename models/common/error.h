#pragma once
// One exception type for every problem a user can fix: it names the file, the item and the problem,
// so the command line can print it and exit non-zero without a stack trace.
#include <stdexcept>
#include <string>

namespace wafersim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string item, std::string problem)
      : std::runtime_error(compose(file, item, problem)),
        file_(std::move(file)),
        item_(std::move(item)),
        problem_(std::move(problem)) {}

  const std::string& file() const { return file_; }
  const std::string& item() const { return item_; }
  const std::string& problem() const { return problem_; }

 private:
  static std::string compose(const std::string& file, const std::string& item,
                             const std::string& problem) {
    std::string text = file.empty() ? std::string("input") : file;
    if (!item.empty()) text += ": " + item;
    return text + ": " + problem;
  }
  std::string file_, item_, problem_;
};

}  // namespace wafersim
