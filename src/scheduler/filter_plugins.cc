// The filter plugins of the default profile. Reason strings are Kubernetes' own so that the
// Unschedulable message reads as kube-scheduler's would.
#include <algorithm>
#include <cstdlib>

#include "api/node_placement.h"
#include "api/object_meta.h"
#include "api/persistent_volumes.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "scheduler/plugins.h"

namespace minik8s::scheduler {

namespace {

const json kEmptyArray = json::array();
const json kEmptyObject = json::object();

const json& field(const json& obj, const char* a, const char* b) {
  if (!obj.is_object()) return kEmptyObject;
  auto i = obj.find(a);
  if (i == obj.end() || !i->is_object()) return kEmptyObject;
  auto j = i->find(b);
  return j == i->end() ? kEmptyObject : *j;
}

const json& arrayOrEmpty(const json& v) { return v.is_array() ? v : kEmptyArray; }

using api::member;

std::string labelOf(const json& obj, const std::string& key) {
  const json& labels = field(obj, "metadata", "labels");
  if (!labels.is_object()) return {};
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool hasLabel(const json& obj, const std::string& key) {
  const json& labels = field(obj, "metadata", "labels");
  return labels.is_object() && labels.contains(key);
}

// A filter whose work is split into preFilter (once per pod) and filterWith (per node), which it
// must both give: filter() alone runs both.
class PreFilteredPlugin : public FilterPlugin {
 public:
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView& cluster) const final {
    auto state = preFilter(pod, cluster);
    return filterWith(pod, node, cluster, state.get());
  }
  std::unique_ptr<FilterState> preFilter(const PodInfo& pod,
                                         const ClusterView& cluster) const override = 0;
  std::vector<std::string> filterWith(const PodInfo& pod, const NodeInfo& node,
                                      const ClusterView& cluster,
                                      const FilterState* state) const override = 0;
};

class NodeReady : public FilterPlugin {
 public:
  std::string name() const override { return "NodeReady"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView&) const override {
    if (node.ready()) return {};
    // Pods that tolerate the not-ready taint (DaemonSet pods) may still go there.
    json taint = {{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}};
    if (toleratesTaint(field(*pod.pod, "spec", "tolerations"), taint)) return {};
    return {reasons::kNodeNotReady};
  }
};

// Kubernetes' VolumeBinding: every persistentVolumeClaim volume's claim must exist, not be
// terminating, and be bound, or, in a WaitForFirstConsumer class, have a free volume that fits on
// the node or a provisioner; a bound volume with required node affinity (local volumes) must
// allow the node. Reasons as kube-scheduler words them.
// Whether an unbound claim's class binds only once a pod using it is scheduled.
bool waitsForFirstConsumer(const json& claim, const ClusterView& cluster) {
  if (!cluster.storageClass) return false;
  auto cls = cluster.storageClass(api::claimClassOf(claim));
  return cls && cls->value("volumeBindingMode", std::string()) == "WaitForFirstConsumer";
}

bool canBindOnNode(const json& claim, const json& node, const ClusterView& cluster) {
  if (cluster.volumes && api::findMatchingVolume(claim, cluster.volumes(), &node)) return true;
  auto cls = cluster.storageClass(api::claimClassOf(claim));
  const std::string provisioner = cls ? cls->value("provisioner", std::string()) : "";
  if (provisioner.empty() || provisioner == "kubernetes.io/no-provisioner") return false;
  // A CSI driver that nodes list in their CSINode (node-local storage such as
  // local.csi.minik8s.io, whose provisioner runs on each node) provisions only on those nodes.
  auto lists = [&provisioner](const json& csiNode) {
    for (const auto& d : valueAt(csiNode, "/spec/drivers", json::array()))
      if (d.value("name", "") == provisioner) return true;
    return false;
  };
  if (!cluster.csiNodes) return true;
  const auto all = cluster.csiNodes();
  if (std::none_of(all.begin(), all.end(), lists)) return true;  // a central provisioner
  auto here = cluster.csiNode(valueAt(node, "/metadata/name", std::string()));
  return here && lists(*here);
}

class VolumeBinding : public FilterPlugin {
 public:
  std::string name() const override { return "VolumeBinding"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView& cluster) const override {
    for (const auto& claimName : pod.claimNames) {
      std::optional<json> claim =
          cluster.claim ? cluster.claim(pod.ns + "/" + claimName) : std::nullopt;
      if (!claim) return {"persistentvolumeclaim \"" + claimName + "\" not found"};
      if (claim->contains("/metadata/deletionTimestamp"_json_pointer)) {
        return {"persistentvolumeclaim \"" + claimName + "\" is being deleted"};
      }
      const std::string volumeName = valueAt(*claim, "/spec/volumeName", std::string());
      if (volumeName.empty()) {
        if (!waitsForFirstConsumer(*claim, cluster)) {
          return {"pod has unbound immediate PersistentVolumeClaims"};
        }
        // WaitForFirstConsumer: this node will do if a free volume fits here or the class can
        // provision one (the scheduler then pre-binds or asks for it, see Scheduler::bind).
        if (!canBindOnNode(*claim, node.node(), cluster)) {
          return {"node(s) didn't find available persistent volumes to bind"};
        }
        continue;
      }
      std::optional<json> volume = cluster.volume ? cluster.volume(volumeName) : std::nullopt;
      if (!volume) return {"persistentvolume \"" + volumeName + "\" not found"};
      if (!api::volumeAllowsNode(*volume, node.node())) {
        return {"node(s) had volume node affinity conflict"};
      }
    }
    return {};
  }
};

// Kubernetes' VolumeRestrictions for claims one pod or one node owns:
// - ReadWriteOncePod: one pod at a time in the whole cluster may use the claim, so every node is
//   refused while another pod (scheduled and not finished) uses it;
// - ReadWriteOnce (without ReadWriteMany or ReadOnlyMany): pods on one node at a time may use it,
//   so other nodes are refused while a pod on one node uses it. Kubernetes leaves this to the
//   attach/detach controller ("Multi-Attach error", the pod stuck in ContainerCreating on its
//   node); refusing here keeps the pod Pending with the reason, and it moves when the old pod goes.
class VolumeRestrictions : public FilterPlugin {
 public:
  std::string name() const override { return "VolumeRestrictions"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView& cluster) const override {
    if (!cluster.claim || pod.claimNames.empty()) return {};
    const std::string& here = node.name();
    for (const auto& claimName : pod.claimNames) {
      auto claim = cluster.claim(pod.ns + "/" + claimName);
      if (!claim) continue;
      const json modes = valueAt(*claim, "/spec/accessModes", json::array());
      auto has = [&](const char* mode) {
        return std::find(modes.begin(), modes.end(), json(mode)) != modes.end();
      };
      const bool oncePod = has("ReadWriteOncePod");
      const bool onceNode =
          !oncePod && has("ReadWriteOnce") && !has("ReadWriteMany") && !has("ReadOnlyMany");
      if (!oncePod && !onceNode) continue;
      for (const NodeInfo* other : cluster.nodes) {
        const std::string& there = other->name();
        if (onceNode && there == here) continue;
        for (const auto& [key, p] : other->pods()) {
          if (key == pod.key || p.ns != pod.ns) continue;
          const auto& used = p.claimNames;
          if (std::find(used.begin(), used.end(), claimName) == used.end()) continue;
          if (oncePod) {
            return {
                "node has pod using PersistentVolumeClaim with the same name and "
                "ReadWriteOncePod access mode"};
          }
          return {"persistentvolumeclaim \"" + claimName +
                  "\" is ReadWriteOnce and in use on node \"" + there + "\""};
        }
      }
    }
    return {};
  }
};

class NodeUnschedulable : public FilterPlugin {
 public:
  std::string name() const override { return "NodeUnschedulable"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView&) const override {
    const json& unschedulable = field(node.node(), "spec", "unschedulable");
    if (!unschedulable.is_boolean() || !unschedulable.get<bool>()) return {};
    json taint = {{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}};
    if (toleratesTaint(field(*pod.pod, "spec", "tolerations"), taint)) return {};
    return {reasons::kNodeUnschedulable};
  }
};

// The pod's tolerations, found once per cycle.
struct TolerationsState : FilterState {
  const json* tolerations = nullptr;
};

class TaintToleration : public PreFilteredPlugin {
 public:
  std::string name() const override { return "TaintToleration"; }
  std::unique_ptr<FilterState> preFilter(const PodInfo& pod, const ClusterView&) const override {
    auto state = std::make_unique<TolerationsState>();
    state->tolerations = &field(*pod.pod, "spec", "tolerations");
    return state;
  }
  std::vector<std::string> filterWith(const PodInfo&, const NodeInfo& node, const ClusterView&,
                                      const FilterState* state) const override {
    const json& tolerations = *static_cast<const TolerationsState*>(state)->tolerations;
    for (const auto& taint : arrayOrEmpty(field(node.node(), "spec", "taints"))) {
      const std::string effect = taint.value("effect", "");
      if (effect != "NoSchedule" && effect != "NoExecute") continue;
      if (toleratesTaint(tolerations, taint)) continue;
      return {"node(s) had untolerated taint {" + taint.value("key", "") + ": " +
              taint.value("value", "") + "}"};
    }
    return {};
  }
};

// Whether the pod constrains its node at all (most pods do not).
struct NodeAffinityState : FilterState {
  bool constrained = false;
};

class NodeAffinity : public PreFilteredPlugin {
 public:
  std::string name() const override { return "NodeAffinity"; }
  std::unique_ptr<FilterState> preFilter(const PodInfo& pod, const ClusterView&) const override {
    auto state = std::make_unique<NodeAffinityState>();
    state->constrained = !field(*pod.pod, "spec", "nodeSelector").empty() ||
                         member(field(*pod.pod, "spec", "affinity"), "nodeAffinity").is_object();
    return state;
  }
  std::vector<std::string> filterWith(const PodInfo& pod, const NodeInfo& node, const ClusterView&,
                                      const FilterState* state) const override {
    if (!static_cast<const NodeAffinityState*>(state)->constrained) return {};
    if (matchesNodeSelectorAndAffinity(*pod.pod, node.node())) return {};
    return {reasons::kNodeAffinity};
  }
};

class NodePorts : public FilterPlugin {
 public:
  std::string name() const override { return "NodePorts"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView&) const override {
    for (const auto& want : pod.hostPorts) {
      for (const auto& used : node.usedPorts()) {
        if (used.port != want.port || used.protocol != want.protocol) continue;
        if (used.hostIp == want.hostIp || used.hostIp == "0.0.0.0" || want.hostIp == "0.0.0.0") {
          return {reasons::kNodePorts};
        }
      }
    }
    return {};
  }
};

class NodeResourcesFit : public FilterPlugin {
 public:
  std::string name() const override { return "NodeResourcesFit"; }
  std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                  const ClusterView&) const override {
    std::vector<std::string> out;
    const Resources& alloc = node.allocatable();
    const Resources& used = node.requested();
    const Resources& want = pod.requests;
    if (used.pods + 1 > alloc.pods) out.push_back(reasons::kTooManyPods);
    if (want.milliCpu > 0 && used.milliCpu + want.milliCpu > alloc.milliCpu) {
      out.push_back("Insufficient cpu");
    }
    if (want.memory > 0 && used.memory + want.memory > alloc.memory) {
      out.push_back("Insufficient memory");
    }
    if (want.ephemeralStorage > 0 &&
        used.ephemeralStorage + want.ephemeralStorage > alloc.ephemeralStorage) {
      out.push_back("Insufficient ephemeral-storage");
    }
    for (const auto& [name, amount] : want.scalar) {
      if (amount <= 0) continue;
      auto a = alloc.scalar.find(name);
      auto u = used.scalar.find(name);
      int64_t have = a == alloc.scalar.end() ? 0 : a->second;
      int64_t taken = u == used.scalar.end() ? 0 : u->second;
      if (taken + amount > have) out.push_back("Insufficient " + name);
    }
    return out;
  }
};

// One required (anti-)affinity term of `owner` (a pod), ready to match other pods.
struct AffinityTerm {
  api::LabelSelector selector;
  std::vector<std::string> namespaces;  // empty with allNamespaces false: the owner's namespace
  bool allNamespaces = false;
  std::string topologyKey;
  bool valid = false;

  bool matches(const PodInfo& other) const {
    if (!valid) return false;
    if (!allNamespaces &&
        std::find(namespaces.begin(), namespaces.end(), other.ns) == namespaces.end()) {
      return false;
    }
    return selector.matches(other.labels());
  }
};

std::vector<AffinityTerm> termsOf(const PodInfo& pod, const char* kind) {
  std::vector<AffinityTerm> out;
  const json& affinity = field(*pod.pod, "spec", "affinity");
  if (!affinity.is_object() || !affinity.contains(kind)) return out;
  const json& section = affinity[kind];
  if (!section.is_object()) return out;
  for (const auto& t :
       arrayOrEmpty(member(section, "requiredDuringSchedulingIgnoredDuringExecution"))) {
    AffinityTerm term;
    auto sel = api::LabelSelector::fromJson(t.value("labelSelector", json()));
    term.valid = sel.ok();
    if (sel.ok()) term.selector = *sel;
    for (const auto& ns : arrayOrEmpty(member(t, "namespaces"))) {
      if (ns.is_string()) term.namespaces.push_back(ns.get<std::string>());
    }
    // An empty namespaceSelector selects every namespace. Namespace labels are not watched, so a
    // non-empty one is treated the same way.
    if (t.contains("namespaceSelector") && t["namespaceSelector"].is_object()) {
      term.allNamespaces = true;
    }
    if (term.namespaces.empty() && !term.allNamespaces) term.namespaces.push_back(pod.ns);
    term.topologyKey = t.value("topologyKey", "");
    out.push_back(std::move(term));
  }
  return out;
}

// Whether nodes a and b are in the same domain of `key` (both carry the label, same value).
bool sameDomain(const NodeInfo& a, const NodeInfo& b, const std::string& key) {
  if (&a == &b) return hasLabel(a.node(), key) || key == "kubernetes.io/hostname";
  if (!hasLabel(a.node(), key) || !hasLabel(b.node(), key)) return false;
  return labelOf(a.node(), key) == labelOf(b.node(), key);
}

// The pod's own terms, parsed once, and what of the cluster's pods concerns them.
struct InterPodAffinityState : FilterState {
  std::vector<AffinityTerm> antiAffinity, affinity;
  // Per affinity term: whether any pod anywhere matches it, and whether the pod itself does.
  std::vector<bool> affinityMatchesAnyPod, affinityMatchesSelf;
  // Existing pods' required anti-affinity terms that select this pod: their node and topology
  // key. A candidate node in the same domain as one of them is ruled out.
  std::vector<std::pair<const NodeInfo*, std::string>> rejectingDomains;
};

class InterPodAffinity : public PreFilteredPlugin {
 public:
  std::string name() const override { return "InterPodAffinity"; }

  std::unique_ptr<FilterState> preFilter(const PodInfo& pod,
                                         const ClusterView& cluster) const override {
    auto state = std::make_unique<InterPodAffinityState>();
    for (const NodeInfo* other : cluster.nodes) {
      for (const auto& key : other->podsWithRequiredAntiAffinity()) {
        const PodInfo& existing = other->pods().at(key);
        for (const auto& term : termsOf(existing, "podAntiAffinity")) {
          if (term.matches(pod)) state->rejectingDomains.emplace_back(other, term.topologyKey);
        }
      }
    }
    state->antiAffinity = termsOf(pod, "podAntiAffinity");
    state->affinity = termsOf(pod, "podAffinity");
    for (const auto& term : state->affinity) {
      bool anyMatch = false;
      for (const NodeInfo* other : cluster.nodes) {
        for (const auto& [k, p] : other->pods()) anyMatch = anyMatch || term.matches(p);
      }
      state->affinityMatchesAnyPod.push_back(anyMatch);
      state->affinityMatchesSelf.push_back(term.matches(pod));
    }
    return state;
  }

  std::vector<std::string> filterWith(const PodInfo&, const NodeInfo& node,
                                      const ClusterView& cluster,
                                      const FilterState* base) const override {
    const auto& state = *static_cast<const InterPodAffinityState*>(base);
    // Existing pods whose anti-affinity rejects this pod in their domain.
    for (const auto& [other, topologyKey] : state.rejectingDomains) {
      if (sameDomain(node, *other, topologyKey)) return {reasons::kExistingAntiAffinity};
    }
    for (const auto& term : state.antiAffinity) {
      if (anyMatchInDomain(term, node, cluster)) return {reasons::kPodAntiAffinity};
    }
    for (size_t i = 0; i < state.affinity.size(); ++i) {
      const AffinityTerm& term = state.affinity[i];
      if (anyMatchInDomain(term, node, cluster)) continue;
      // The first pod of a group that selects itself may go anywhere its topology key exists,
      // as long as no pod anywhere matches the term yet.
      bool keyPresent =
          hasLabel(node.node(), term.topologyKey) || term.topologyKey == "kubernetes.io/hostname";
      if (!state.affinityMatchesAnyPod[i] && state.affinityMatchesSelf[i] && keyPresent) continue;
      return {reasons::kPodAffinity};
    }
    return {};
  }

 private:
  static bool anyMatchInDomain(const AffinityTerm& term, const NodeInfo& node,
                               const ClusterView& cluster) {
    for (const NodeInfo* other : cluster.nodes) {
      if (!sameDomain(node, *other, term.topologyKey)) continue;
      for (const auto& [k, p] : other->pods()) {
        if (term.matches(p)) return true;
      }
    }
    return false;
  }
};

template <typename T>
FilterFactory filterFactory() {
  return [] { return std::make_unique<T>(); };
}

}  // namespace

const std::vector<std::string>& defaultFilterOrder() {
  static const std::vector<std::string> kOrder = {
      "NodeReady",        "NodeUnschedulable", "TaintToleration",    "NodeAffinity", "NodePorts",
      "NodeResourcesFit", "InterPodAffinity",  "VolumeRestrictions", "VolumeBinding"};
  return kOrder;
}

const std::map<std::string, FilterFactory>& filterPlugins() {
  static const std::map<std::string, FilterFactory> kPlugins = {
      {"NodeReady", filterFactory<NodeReady>()},
      {"NodeUnschedulable", filterFactory<NodeUnschedulable>()},
      {"TaintToleration", filterFactory<TaintToleration>()},
      {"NodeAffinity", filterFactory<NodeAffinity>()},
      {"NodePorts", filterFactory<NodePorts>()},
      {"NodeResourcesFit", filterFactory<NodeResourcesFit>()},
      {"InterPodAffinity", filterFactory<InterPodAffinity>()},
      {"VolumeRestrictions", filterFactory<VolumeRestrictions>()},
      {"VolumeBinding", filterFactory<VolumeBinding>()},
  };
  return kPlugins;
}

}  // namespace minik8s::scheduler
