// tc-db-bench: several processes writing one measurement database at once, as tuning runs on
// many machines do (docs/distributed.md quotes it). Each writer looks a key up and then puts it,
// as PersistentOracle does for a candidate it measured, with keys as long as real structural keys.
//
//   tc-db-bench WHERE WRITERS PUTS [KEY_BYTES]
//
// WHERE is an SQLite file or a PostgreSQL URL. Prints the puts per second of all writers together
// and checks that the database then holds every entry once.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "costing/measurement_database.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: tc-db-bench WHERE WRITERS PUTS [KEY_BYTES]\n");
    return 2;
  }
  const std::string where = argv[1];
  const int writers = std::atoi(argv[2]);
  const int puts = std::atoi(argv[3]);
  const int key_bytes = argc > 4 ? std::atoi(argv[4]) : 600;
  const std::string identity = "measured@bench|" + std::to_string(::getpid());
  {
    auto db = tc::open_measurement_database(where);
    if (!db.ok()) {
      std::fprintf(stderr, "tc-db-bench: %s\n", db.error().message.c_str());
      return 1;
    }
  }
  int go[2];
  if (::pipe(go) != 0) return 1;
  for (int w = 0; w < writers; ++w) {
    if (::fork() != 0) continue;
    ::close(go[1]);
    auto db = tc::open_measurement_database(where);
    if (!db.ok()) std::_Exit(1);
    char c = 0;
    if (::read(go[0], &c, 1) != 0) std::_Exit(1);  // every writer starts when the pipe closes
    const std::string pad(static_cast<std::size_t>(key_bytes), 'k');
    for (int k = 0; k < puts; ++k) {
      std::string key = pad + std::to_string(w) + "-" + std::to_string(k);
      if ((*db)->find(identity, key)) std::_Exit(1);
      (*db)->put(identity, std::move(key), collage::Measurement{collage::Cost::value(k), 0.01, 5});
    }
    std::_Exit((*db)->failures() == 0 ? 0 : 1);
  }
  ::close(go[0]);
  const auto started = std::chrono::steady_clock::now();
  ::close(go[1]);
  int failed = 0;
  for (int w = 0; w < writers; ++w) {
    int status = 0;
    ::wait(&status);
    failed += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto db = tc::open_measurement_database(where);
  std::size_t found = 0;
  for (int w = 0; db.ok() && w < writers; ++w) {
    const std::string pad(static_cast<std::size_t>(key_bytes), 'k');
    for (int k = 0; k < puts; ++k) found += (*db)->find(identity, pad + std::to_string(w) + "-" + std::to_string(k)) ? 1 : 0;
  }
  std::printf("%s: %d writers x %d puts in %.3f s: %.0f puts/s; %zu of %d entries found; %d writers failed\n",
              db.ok() ? (*db)->describe().c_str() : where.c_str(), writers, puts, seconds, writers * puts / seconds,
              found, writers * puts, failed);
  return failed == 0 && found == static_cast<std::size_t>(writers * puts) ? 0 : 1;
}
