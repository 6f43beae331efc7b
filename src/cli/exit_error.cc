#include "cli/exit_error.h"

#include <cstdlib>
#include <iostream>

namespace minik8s::cli {

void exitWithError(std::string_view message) {
  std::cerr << "error: " << message << "\n";
  std::exit(1);
}

void exitWithError(const Status& s) { exitWithError(s.message()); }

}  // namespace minik8s::cli
