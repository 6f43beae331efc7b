#include "kubelet/images/tar_archive.h"

#include <cstring>

#include "fmt/format.h"

namespace minik8s::kubelet::images {
namespace {

constexpr size_t kBlock = 512;

void putOctal(char* field, size_t width, uint64_t value) {
  // width includes the terminating NUL.
  std::string s = fmt::format("{:0{}o}", value, width - 1);
  std::memcpy(field, s.data(), width - 1);
  field[width - 1] = '\0';
}

void padToBlock(std::string& out) {
  size_t rem = out.size() % kBlock;
  if (rem != 0) out.append(kBlock - rem, '\0');
}

// One PAX record: "<len> key=value\n" where len counts the whole record including itself.
std::string paxRecord(const std::string& key, const std::string& value) {
  size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) len = std::to_string(len).size() + body;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

uint64_t parseOctal(const char* field, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width && field[i] != '\0' && field[i] != ' '; ++i) {
    if (field[i] < '0' || field[i] > '7') break;
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
  }
  return v;
}

std::string fieldString(const char* field, size_t width) {
  return std::string(field, strnlen(field, width));
}

}  // namespace

void TarWriter::writeHeader(const std::string& name, char typeflag, uint32_t mode, uint64_t size,
                            const std::string& linkName) {
  char h[kBlock];
  std::memset(h, 0, sizeof(h));
  std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
  putOctal(h + 100, 8, mode);
  putOctal(h + 108, 8, 0);  // uid
  putOctal(h + 116, 8, 0);  // gid
  putOctal(h + 124, 12, size);
  putOctal(h + 136, 12, 0);  // mtime: fixed for reproducible digests
  std::memset(h + 148, ' ', 8);
  h[156] = typeflag;
  std::memcpy(h + 157, linkName.data(), std::min<size_t>(linkName.size(), 100));
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 265, "root", 4);
  std::memcpy(h + 297, "root", 4);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::string s = fmt::format("{:06o}", sum);
  std::memcpy(h + 148, s.data(), 6);
  h[154] = '\0';
  h[155] = ' ';
  out_.append(h, sizeof(h));
}

void TarWriter::add(const TarEntry& entry) {
  std::string name = entry.path;
  if (entry.type == TarEntryType::kDirectory && !name.empty() && name.back() != '/') name += '/';
  std::string pax;
  if (name.size() > 100) pax += paxRecord("path", name);
  if (entry.linkTarget.size() > 100) pax += paxRecord("linkpath", entry.linkTarget);
  if (!pax.empty()) {
    writeHeader("PaxHeaders/" + name.substr(0, 80), 'x', 0644, pax.size(), "");
    out_ += pax;
    padToBlock(out_);
  }
  switch (entry.type) {
    case TarEntryType::kFile:
      writeHeader(name, '0', entry.mode, entry.data.size(), "");
      out_ += entry.data;
      padToBlock(out_);
      break;
    case TarEntryType::kDirectory:
      writeHeader(name, '5', entry.mode, 0, "");
      break;
    case TarEntryType::kSymlink:
      writeHeader(name, '2', 0777, 0, entry.linkTarget);
      break;
  }
}

std::string TarWriter::finish() {
  out_.append(2 * kBlock, '\0');
  return std::move(out_);
}

Result<std::vector<TarEntry>> readTar(const std::string& bytes) {
  std::vector<TarEntry> entries;
  std::string longName, longLink;
  size_t pos = 0;
  while (pos + kBlock <= bytes.size()) {
    const char* h = bytes.data() + pos;
    if (h[0] == '\0') break;  // end-of-archive block
    unsigned sum = 0;
    for (size_t i = 0; i < kBlock; ++i) {
      sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
    }
    if (sum != parseOctal(h + 148, 8)) {
      return Status::BadRequest(fmt::format("tar: bad header checksum at offset {}", pos));
    }
    uint64_t size = parseOctal(h + 124, 12);
    char type = h[156];
    pos += kBlock;
    if (pos + size > bytes.size()) return Status::BadRequest("tar: truncated archive");
    std::string data = bytes.substr(pos, size);
    pos += (size + kBlock - 1) / kBlock * kBlock;

    if (type == 'x') {  // PAX extended header for the next entry
      size_t p = 0;
      while (p < data.size()) {
        size_t sp = data.find(' ', p);
        if (sp == std::string::npos) break;
        size_t len = std::stoul(data.substr(p, sp - p));
        if (len == 0 || p + len > data.size()) break;
        std::string rec = data.substr(sp + 1, len - (sp - p) - 2);
        size_t eq = rec.find('=');
        if (eq != std::string::npos) {
          if (rec.substr(0, eq) == "path") longName = rec.substr(eq + 1);
          if (rec.substr(0, eq) == "linkpath") longLink = rec.substr(eq + 1);
        }
        p += len;
      }
      continue;
    }
    if (type == 'g') continue;
    if (type == 'L') {
      longName = fieldString(data.data(), data.size());
      continue;
    }
    if (type == 'K') {
      longLink = fieldString(data.data(), data.size());
      continue;
    }

    TarEntry e;
    std::string prefix = fieldString(h + 345, 155);
    e.path =
        !longName.empty() ? longName : (prefix.empty() ? "" : prefix + "/") + fieldString(h, 100);
    e.linkTarget = !longLink.empty() ? longLink : fieldString(h + 157, 100);
    longName.clear();
    longLink.clear();
    e.mode = static_cast<uint32_t>(parseOctal(h + 100, 8));
    while (e.path.starts_with("./")) e.path = e.path.substr(2);
    if (type == '5') {
      e.type = TarEntryType::kDirectory;
      if (!e.path.empty() && e.path.back() == '/') e.path.pop_back();
    } else if (type == '2') {
      e.type = TarEntryType::kSymlink;
    } else {
      e.type = TarEntryType::kFile;
      if (type == '0' || type == '\0' || type == '7') e.data = std::move(data);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace minik8s::kubelet::images
