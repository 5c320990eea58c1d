#pragma once

/// \file
/// MpiTransport: the Transport of a run started by mpirun (Open MPI), and how a process tells
/// whether it was.
///
/// One thread per process makes every MPI call after MPI_Init (MPI_THREAD_SERIALIZED): it sends
/// what send() queued, receives into the queue receive() reads, and sends a heartbeat every
/// `heartbeat_seconds` (rank 0 to every rank, every rank to rank 0). It waits with MPI_Iprobe and
/// short sleeps, never in a blocking MPI call, so an idle rank takes next to no CPU from the ranks
/// that measure beside it, and no call waits forever on a rank that died.
///
/// Open MPI 4.1 ends the whole job when a rank dies unless mpirun is given --enable-recovery (or
/// OMPI_MCA_orte_enable_recovery=1); with it the other ranks go on. MPI_Finalize waits for every
/// rank, forever for a stuck one, so end() finalises only a clean run and otherwise ends the job
/// with MPI_Abort.

#include <memory>
#include <optional>
#include <string>

#include <collage/support/result.hpp>

#include "distributed/transport.hpp"

namespace tc {

/// Where this process stands in a job, from the environment mpirun gives its ranks.
struct MpiLaunch {
  int rank = 0;
  int size = 1;
  /// Whether mpirun was told to go on when a rank dies (--enable-recovery).
  bool recovery = false;
};

/// The launch this process is part of, or nothing when it was not started by mpirun (Open MPI's
/// OMPI_COMM_WORLD_RANK and _SIZE, or PMI_RANK and PMI_SIZE of other launchers).
std::optional<MpiLaunch> mpi_launch();

/// Whether this build has MPI.
bool have_mpi();

/// Messages between the ranks of an mpirun job.
class MpiTransport final : public Transport {
 public:
  /// Initialises MPI and starts the thread that moves messages. Fails with one line when this
  /// build has no MPI or the library cannot give the thread support it needs.
  static collage::Result<std::unique_ptr<MpiTransport>> start(int* argc, char*** argv, double heartbeat_seconds = 0.5);

  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;
  /// end(1, false) unless end() was called.
  ~MpiTransport() override;

  int rank() const override;
  int size() const override;
  void send(int to, std::string bytes) override;
  std::optional<Envelope> receive(double max_wait_seconds) override;
  double silence(int from) const override;

  /// Delivers what was sent (waiting at most `flush_seconds`), stops the thread and ends MPI:
  /// MPI_Finalize when `clean` and everything was delivered, and returns `status`; otherwise
  /// MPI_Abort(`status`), which ends every rank of the job and this process.
  int end(int status, bool clean, double flush_seconds = 5);

 private:
  struct State;
  explicit MpiTransport(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tc
