#include "controllers/deployment/rolling_update.h"

#include <algorithm>

#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

Result<Fenceposts> resolveFenceposts(const json& maxSurge, const json& maxUnavailable,
                                     int64_t replicas) {
  auto surge = scaledValue(maxSurge, replicas, /*roundUp=*/true);
  if (!surge.ok()) return surge.status();
  auto unavailable = scaledValue(maxUnavailable, replicas, /*roundUp=*/false);
  if (!unavailable.ok()) return unavailable.status();
  Fenceposts f{*surge, *unavailable};
  if (f.maxSurge == 0 && f.maxUnavailable == 0) f.maxUnavailable = 1;
  return f;
}

int64_t newReplicaSetReplicas(int64_t replicas, int64_t maxSurge, int64_t currentPods,
                              int64_t newReplicaSetSpec) {
  const int64_t maxTotal = replicas + maxSurge;
  if (currentPods >= maxTotal) return newReplicaSetSpec;
  const int64_t up = std::min(maxTotal - currentPods, replicas - newReplicaSetSpec);
  return newReplicaSetSpec + std::max<int64_t>(up, 0);
}

std::vector<int64_t> scaleDownOldReplicaSets(const std::vector<ReplicaSetCounts>& oldOnes,
                                             const ReplicaSetCounts& newOne, int64_t replicas,
                                             int64_t maxUnavailable) {
  std::vector<int64_t> spec;
  // A ReplicaSet's status may still count pods its (just lowered) spec is about to delete: such
  // pods are not worth any availability, or two syncs in a row would scale down twice for them.
  int64_t oldPods = 0, allPods = newOne.specReplicas;
  int64_t available = std::min(newOne.availableReplicas, newOne.specReplicas);
  for (const auto& rs : oldOnes) {
    spec.push_back(rs.specReplicas);
    oldPods += rs.specReplicas;
    allPods += rs.specReplicas;
    available += std::min(rs.availableReplicas, rs.specReplicas);
  }
  if (oldPods == 0) return spec;
  const int64_t minAvailable = replicas - maxUnavailable;
  const int64_t newUnavailable = newOne.specReplicas - newOne.availableReplicas;
  const int64_t maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return spec;

  // Unhealthy old replicas cost no availability: remove them first.
  int64_t cleaned = 0;
  for (size_t i = 0; i < oldOnes.size() && cleaned < maxScaledDown; ++i) {
    const int64_t unhealthy = spec[i] - std::min(spec[i], oldOnes[i].availableReplicas);
    if (spec[i] == 0 || unhealthy <= 0) continue;
    const int64_t down = std::min(maxScaledDown - cleaned, unhealthy);
    spec[i] -= down;
    cleaned += down;
  }
  if (available <= minAvailable) return spec;
  const int64_t target = available - minAvailable;
  int64_t done = 0;
  for (size_t i = 0; i < spec.size() && done < target; ++i) {
    if (spec[i] == 0) continue;
    const int64_t down = std::min(spec[i], target - done);
    spec[i] -= down;
    done += down;
  }
  return spec;
}

std::string podTemplateHash(const json& podTemplate, int64_t collisionCount) {
  std::string text = podTemplate.dump();  // nlohmann objects are key-sorted: canonical
  if (collisionCount > 0) text += std::to_string(collisionCount);
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (char c : std::to_string(h)) out.push_back(kAlphabet[static_cast<unsigned char>(c) % 27]);
  return out;
}

}  // namespace minik8s::controllers
