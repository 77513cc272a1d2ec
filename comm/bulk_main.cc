// bulk: serves files and folders by content hash over UCX, and fetches them into a cache
// (comm/bulk_server.h, comm/bulk_fetch.h). The head and agents use the library; this tool runs
// it by hand and in the integration tests.
#include "comm/bulk_commands.h"
#include "comm/ucp_worker.h"
#include "common/cli.h"
#include "common/logging.h"

int main(int argc, char** argv) {
  tunefleet::comm::QuietUcxWarnings();
  tunefleet::InitBinary("bulk");
  return tunefleet::RunSubcommands(
      "bulk",
      "Content-addressed bulk transfer over UCX: serve files and folders by SHA-256, fetch\n"
      "them into a verified cache.",
      {{"serve", "publish paths and serve them until SIGINT/SIGTERM", tunefleet::comm::BulkServe},
       {"fetch", "fetch a hash into a cache folder (or reuse it)", tunefleet::comm::BulkFetch},
       {"hash", "print the content hash of files and folders", tunefleet::comm::BulkHash}},
      argc, argv);
}
