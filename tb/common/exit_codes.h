#pragma once
// The exit codes of every wafersim command (docs/usage.md, "Exit codes"). One table, so that batch
// systems and scripts can tell bad input from a stalled model from a run someone stopped.
namespace wafersim::tb {

enum ExitCode : int {
  kOk = 0,
  kInputError = 1,     // bad input or usage: the message names the file, the item and the problem
  kStudyFailures = 2,  // a study finished but some of its runs failed (see results.csv)
  kStalled = 3,        // the simulation can no longer progress: a rank waits for what never comes
  kDataMismatch = 4,   // run --data: a rank ended a collective with a wrong value
  kHungUp = 129,       // stopped by SIGHUP (the terminal closed); likewise
  kInterrupted = 130,  // stopped by SIGINT (Ctrl-C); reports written, marked incomplete
  kTerminated = 143,   // stopped by SIGTERM (timeout, Slurm, kill); likewise
};

}  // namespace wafersim::tb
