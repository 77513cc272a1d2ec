#include "launcher/agent/gpu_share.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace tunefleet {
namespace launcher {
namespace {

double Gib(double mib) { return mib / 1024.0; }

}  // namespace

double ShareMarginMib(double total_mib) { return std::max(512.0, 0.05 * total_mib); }

ShareDecision DecideShare(double estimate_mib, double free_mib, double total_mib,
                          const std::vector<ShareTenant>& tenants) {
  double reserved = 0;
  for (const ShareTenant& t : tenants) {
    reserved += std::max(0.0, t.estimate_mib + kContextMib - t.used_mib.value_or(0));
  }
  ShareDecision d;
  d.headroom_mib = free_mib - reserved;
  d.needed_mib = std::max(0.0, estimate_mib) + kContextMib + ShareMarginMib(total_mib);
  d.fits = d.needed_mib <= d.headroom_mib;
  d.why = absl::StrFormat(
      "needs %.2f GiB (estimate %.2f + context %.2f + margin %.2f); %.2f GiB free, %.2f GiB "
      "of it still reserved by its %d trial(s)",
      Gib(d.needed_mib), Gib(estimate_mib), Gib(kContextMib), Gib(ShareMarginMib(total_mib)),
      Gib(free_mib), Gib(reserved), static_cast<int>(tenants.size()));
  return d;
}

}  // namespace launcher
}  // namespace tunefleet
