#include "tb/common/error_path.h"

#include <filesystem>
#include <new>
#include <ostream>
#include <systemc>

#include "models/common/error.h"
#include "tb/common/exit_codes.h"

namespace wafersim::tb {

void quiet_systemc_reports() {
  using namespace sc_core;
  sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", SC_DO_NOTHING);
  sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);
  sc_report_handler::set_actions(SC_WARNING, SC_DO_NOTHING);
  // Errors still stop the kernel (they are thrown), but are shown by us, once.
  sc_report_handler::set_actions(SC_ERROR, SC_THROW);
  sc_report_handler::set_actions(SC_FATAL, SC_THROW);
}

std::string describe_current_exception() {
  try {
    throw;
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return "out of memory: the platform or the workload is too large for this machine (see the "
           "limits in docs/config.md)";
  } catch (const std::filesystem::filesystem_error& e) {
    std::string where = e.path1().empty() ? std::string("file system") : e.path1().string();
    return where + ": " + e.code().message();
  } catch (const sc_core::sc_report& r) {
    // An exception that escaped a SystemC process arrives wrapped: keep only its own words.
    std::string msg = r.get_msg();
    const std::string wrapper = "uncaught exception: ";
    if (msg.rfind(wrapper, 0) == 0) msg = msg.substr(wrapper.size());
    return "internal error in the simulation kernel: " + msg;
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  } catch (...) {
    return "internal error: unknown exception";
  }
}

int run_guarded(const std::function<int()>& command, std::ostream& err) {
  try {
    return command();
  } catch (...) {
    err << "wafersim: error: " << describe_current_exception() << "\n";
    return kInputError;
  }
}

}  // namespace wafersim::tb
