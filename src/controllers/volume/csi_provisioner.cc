#include "controllers/volume/csi_provisioner.h"

#include "api/object_meta.h"
#include "api/persistent_volumes.h"
#include "api/quantity.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "controllers/volume/volume_binding.h"

namespace minik8s::controllers {

using api::capacityBytes;
using api::findMatchingVolume;
using api::nameOf;
using api::namespaceOf;
using api::requestedBytes;
using api::stringAt;
using api::uidOf;
using api::volumeBoundToClaim;
using api::volumeMismatch;

namespace {

std::string claimKeyOf(const json& claim) { return namespaceOf(claim) + "/" + nameOf(claim); }

}  // namespace

CsiProvisioner::CsiProvisioner(client::RestClient& rest, client::Informer& claims,
                               client::Informer& volumes, client::Informer& classes,
                               CsiProvisionerOptions options)
    : rest_(rest),
      claims_(claims),
      volumes_(volumes),
      classes_(classes),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "csi-provisioner") {
  for (const auto& [driver, endpoint] : options_.drivers) {
    clients_[driver] = std::make_unique<csi::CsiClient>(endpoint, options_.timeout);
  }
  auto claimKey = [this](const json& c) { queue_.add(claimQueueKey(namespaceOf(c), nameOf(c))); };
  claims_.addHandlers({claimKey, [claimKey](const json&, const json& c) { claimKey(c); }, nullptr});
  auto volumeKey = [this](const json& v) { queue_.add(volumeQueueKey(nameOf(v))); };
  volumes_.addHandlers(
      {volumeKey, [volumeKey](const json&, const json& v) { volumeKey(v); }, nullptr});
}

CsiProvisioner::~CsiProvisioner() { stop(); }
void CsiProvisioner::start() { workers_.start(options_.workers); }
void CsiProvisioner::stop() { workers_.stop(); }

csi::CsiClient* CsiProvisioner::clientFor(const std::string& driver) {
  auto it = clients_.find(driver);
  return it == clients_.end() ? nullptr : it->second.get();
}

void CsiProvisioner::event(const json& obj, const std::string& kind, const std::string& type,
                           const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = obj;
  involved["kind"] = kind;
  involved["apiVersion"] = "v1";
  options_.events->record(involved, type, reason, message);
}

Status CsiProvisioner::sync(const std::string& key) {
  auto k = parseVolumeQueueKey(key);
  if (!k) return Status::Ok();
  auto obj = k->claim ? claims_.get(k->ns + "/" + k->name) : volumes_.get(k->name);
  if (!obj) return Status::Ok();
  return k->claim ? syncClaim(*obj) : syncVolume(*obj);
}

Status CsiProvisioner::syncClaim(const json& claim) {
  if (isTerminating(claim)) return Status::Ok();
  auto cls = classes_.get(api::claimClassOf(claim));
  const std::string volumeName = stringAt(claim, "/spec/volumeName");
  if (!volumeName.empty()) {
    // Bound (or binding): maybe an expansion.
    if (!options_.nodeName.empty()) return Status::Ok();
    if (!cls || !cls->value("allowVolumeExpansion", false)) return Status::Ok();
    auto volume = volumes_.get(volumeName);
    if (!volume) return Status::Ok();
    const std::string driver = stringAt(*volume, "/spec/csi/driver");
    if (!clientFor(driver) || api::annotationValue(*volume, api::kAnnProvisionedBy) != driver) {
      return Status::Ok();
    }
    auto want = requestedBytes(claim);
    auto have = capacityBytes(*volume);
    if (want && have && *want > *have) return expand(claim, *volume, driver);
    return Status::Ok();
  }
  const std::string driver = api::annotationValue(claim, api::kAnnStorageProvisioner);
  if (driver.empty() || !clientFor(driver)) return Status::Ok();  // not ours
  if (!cls || cls->value("provisioner", std::string()) != driver) return Status::Ok();
  const std::string selectedNode = api::annotationValue(claim, api::kAnnSelectedNode);
  if (cls->value("volumeBindingMode", std::string()) == "WaitForFirstConsumer" &&
      selectedNode.empty()) {
    return Status::Ok();  // the scheduler picks the node first
  }
  if (!options_.nodeName.empty() && selectedNode != options_.nodeName) {
    return Status::Ok();  // another node's provisioner serves it
  }
  return provision(claim, *cls, driver);
}

Status CsiProvisioner::provision(const json& claim, const json& cls, const std::string& driver) {
  const std::string pvName = "pvc-" + uidOf(claim);
  if (volumes_.get(pvName)) return Status::Ok();  // made already; the binder binds it
  auto existing = rest_.get(kPersistentVolumes, "", pvName);
  if (existing.ok()) return Status::Ok();
  if (existing.status().code() != 404) return existing.status();
  auto bytes = requestedBytes(claim);
  if (!bytes) {
    event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
          "the claim has no valid spec.resources.requests.storage");
    return Status::Ok();
  }
  event(claim, "PersistentVolumeClaim", "Normal", "Provisioning",
        "External provisioner is provisioning volume for claim \"" + claimKeyOf(claim) + "\"");
  csi::v1::CreateVolumeRequest request;
  request.set_name(pvName);
  request.mutable_capacity_range()->set_required_bytes(*bytes);
  const json modes = valueAt(claim, "/spec/accessModes", json::array());
  for (const auto& mode : modes) {
    auto* cap = request.add_volume_capabilities();
    cap->mutable_mount();
    cap->mutable_access_mode()->set_mode(csi::accessModeOf(mode.get<std::string>()));
  }
  if (!options_.nodeName.empty()) {
    // Node-deployment: the volume must be reachable from this node.
    auto info = clientFor(driver)->nodeInfo();
    if (!info.ok()) {
      event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
            "failed to get the topology of node " + options_.nodeName + " from " + driver + ": " +
                info.status().message());
      return info.status();
    }
    if (!info->accessible_topology().segments().empty()) {
      auto* requirements = request.mutable_accessibility_requirements();
      *requirements->add_requisite() = info->accessible_topology();
      *requirements->add_preferred() = info->accessible_topology();
    }
  }
  const json parameters = cls.value("parameters", json::object());
  for (const auto& [k, v] : parameters.items()) {
    if (v.is_string()) (*request.mutable_parameters())[k] = v.get<std::string>();
  }
  auto created = clientFor(driver)->createVolume(request);
  if (!created.ok()) {
    event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
          "failed to provision volume with StorageClass \"" + nameOf(cls) +
              "\": " + created.status().message());
    return created.status();
  }
  const auto& vol = created->volume();
  // The size as the claim wrote it when the driver gave exactly that, else in bytes.
  json capacity = valueAt(claim, "/spec/resources/requests/storage", json());
  if (vol.capacity_bytes() != 0 && vol.capacity_bytes() != *bytes) {
    capacity =
        api::Quantity::fromValue(vol.capacity_bytes(), api::Quantity::Format::kBinarySI).toString();
  }
  json attributes = json::object();
  for (const auto& [k, v] : vol.volume_context()) attributes[k] = v;
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", pvName}, {"annotations", {{api::kAnnProvisionedBy, driver}}}}},
             {"spec",
              {{"capacity", {{"storage", capacity}}},
               {"accessModes", modes},
               {"persistentVolumeReclaimPolicy", cls.value("reclaimPolicy", std::string("Delete"))},
               {"storageClassName", nameOf(cls)},
               {"volumeMode", valueAt(claim, "/spec/volumeMode", std::string("Filesystem"))},
               {"claimRef",
                {{"kind", "PersistentVolumeClaim"},
                 {"apiVersion", "v1"},
                 {"namespace", namespaceOf(claim)},
                 {"name", nameOf(claim)},
                 {"uid", uidOf(claim)}}},
               {"csi", {{"driver", driver}, {"volumeHandle", vol.volume_id()}}}}}};
  if (!attributes.empty()) pv["spec"]["csi"]["volumeAttributes"] = attributes;
  if (cls.contains("mountOptions")) pv["spec"]["mountOptions"] = cls["mountOptions"];
  // Where the volume can be used, as the driver said (external-provisioner's nodeAffinity).
  json terms = json::array();
  for (const auto& topology : vol.accessible_topology()) {
    json expressions = json::array();
    for (const auto& [key, value] : topology.segments()) {
      expressions.push_back({{"key", key}, {"operator", "In"}, {"values", json::array({value})}});
    }
    if (!expressions.empty()) terms.push_back({{"matchExpressions", expressions}});
  }
  if (!terms.empty()) pv["spec"]["nodeAffinity"] = {{"required", {{"nodeSelectorTerms", terms}}}};
  auto r = rest_.create(kPersistentVolumes, "", pv);
  if (!r.ok() && r.status().reason() != "AlreadyExists") {
    event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
          "failed to save PersistentVolume \"" + pvName + "\": " + r.status().message());
    return r.status();
  }
  event(claim, "PersistentVolumeClaim", "Normal", "ProvisioningSucceeded",
        "Successfully provisioned volume " + pvName);
  LOG_INFO("csi-provisioner: {} for claim {} ({} bytes, {})", pvName, claimKeyOf(claim), *bytes,
           driver);
  return Status::Ok();
}

Status CsiProvisioner::expand(const json& claim, const json& volume, const std::string& driver) {
  auto want = requestedBytes(claim);
  csi::v1::ControllerExpandVolumeRequest request;
  request.set_volume_id(stringAt(volume, "/spec/csi/volumeHandle"));
  request.mutable_capacity_range()->set_required_bytes(*want);
  auto grown = clientFor(driver)->expandVolume(request);
  if (!grown.ok()) {
    event(claim, "PersistentVolumeClaim", "Warning", "VolumeResizeFailed",
          "resize volume \"" + nameOf(volume) + "\" by resizer \"" + driver +
              "\" failed: " + grown.status().message());
    return grown.status();
  }
  json updated = volume;
  updated["spec"]["capacity"]["storage"] =
      valueAt(claim, "/spec/resources/requests/storage", json());
  auto r = rest_.update(kPersistentVolumes, updated);
  if (!r.ok()) return r.status();
  event(claim, "PersistentVolumeClaim", "Normal", "VolumeResizeSuccessful",
        "resize volume \"" + nameOf(volume) + "\" by resizer \"" + driver + "\" finished");
  return Status::Ok();
}

Status CsiProvisioner::syncVolume(const json& volume) {
  const std::string driver = api::annotationValue(volume, api::kAnnProvisionedBy);
  if (!clientFor(driver) || stringAt(volume, "/spec/csi/driver") != driver) {
    return Status::Ok();
  }
  if (stringAt(volume, "/status/phase") != "Released" ||
      stringAt(volume, "/spec/persistentVolumeReclaimPolicy") != "Delete" ||
      isTerminating(volume)) {
    return Status::Ok();
  }
  if (!options_.nodeName.empty() && !api::volumePinnedToNode(volume, options_.nodeName)) {
    return Status::Ok();  // on another node: its provisioner deletes it
  }
  Status s = clientFor(driver)->deleteVolume(stringAt(volume, "/spec/csi/volumeHandle"));
  if (!s.ok()) {
    event(volume, "PersistentVolume", "Warning", "VolumeFailedDelete", s.message());
    return s;
  }
  auto r = rest_.remove(kPersistentVolumes, "", nameOf(volume));
  if (!r.ok() && r.status().code() != 404) return r.status();
  LOG_INFO("csi-provisioner: deleted {} ({})", nameOf(volume), driver);
  return Status::Ok();
}

}  // namespace minik8s::controllers
