// FlatObject: the storage of a JSON object's members, a vector of (key, value) kept sorted by key.
//
// nlohmann::json stores an object's members in a std::map by default: one 96-byte tree node per
// member, a pointer chase per step of a lookup. Kubernetes objects are small maps (a pod's
// deepest has under 20 keys) read far more often than changed, and the informers and the watch
// cache hold thousands of them: a sorted vector holds the same members in ~half the memory
// (measured: a server holding 10,000 pods 208 -> 173 MiB) and looks them up by binary search in
// contiguous memory. Members stay in key order, so dumps, comparisons and iteration are exactly
// what std::map gave.
//
// The one difference a caller can see: inserting or erasing a member moves the others, so a
// reference, pointer or iterator into an object's members does not survive an insertion into or
// erasure from that same object (std::map's did). Take the reference after the last insertion, or
// look the member up again. A sanitizer build (MINIK8S_SANITIZE) defines
// MINIK8S_FLAT_OBJECT_MOVE_ON_CHANGE, which moves every member to fresh storage on each change, so
// AddressSanitizer reports any such reference that is used afterwards.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace minik8s {

// The template parameters are the ones nlohmann::basic_json passes to its ObjectType.
template <class Key, class T, class Compare = std::less<>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
class FlatObject {
 public:
  using key_type = Key;
  using mapped_type = T;
  using value_type = std::pair<Key, T>;  // key not const: members are moved when one is inserted
  using key_compare = Compare;
  using allocator_type =
      typename std::allocator_traits<Allocator>::template rebind_alloc<value_type>;

 private:
  using Members = std::vector<value_type, allocator_type>;

 public:
  using size_type = typename Members::size_type;
  using difference_type = typename Members::difference_type;
  using iterator = typename Members::iterator;
  using const_iterator = typename Members::const_iterator;
  using reference = value_type&;
  using const_reference = const value_type&;

  FlatObject() = default;
  template <class It>
  FlatObject(It first, It last) {
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      members_.reserve(static_cast<size_type>(std::distance(first, last)));
    }
    insert(first, last);
  }
  FlatObject(std::initializer_list<value_type> init) : FlatObject(init.begin(), init.end()) {}

  iterator begin() noexcept { return members_.begin(); }
  iterator end() noexcept { return members_.end(); }
  const_iterator begin() const noexcept { return members_.begin(); }
  const_iterator end() const noexcept { return members_.end(); }
  const_iterator cbegin() const noexcept { return members_.cbegin(); }
  const_iterator cend() const noexcept { return members_.cend(); }

  bool empty() const noexcept { return members_.empty(); }
  size_type size() const noexcept { return members_.size(); }
  void shrink_to_fit() { members_.shrink_to_fit(); }
  size_type max_size() const noexcept { return members_.max_size(); }
  void clear() noexcept { members_.clear(); }

  template <class K>
  iterator find(const K& key) {
    auto it = lowerBound(key);
    return it != members_.end() && !less_(key, it->first) ? it : members_.end();
  }
  template <class K>
  const_iterator find(const K& key) const {
    return const_cast<FlatObject*>(this)->find(key);
  }
  template <class K>
  size_type count(const K& key) const {
    return find(key) == end() ? 0 : 1;
  }
  template <class K>
  bool contains(const K& key) const {
    return find(key) != end();
  }

  template <class K>
  T& at(const K& key) {
    auto it = find(key);
    if (it == members_.end()) throw std::out_of_range("key not found");
    return it->second;
  }
  template <class K>
  const T& at(const K& key) const {
    return const_cast<FlatObject*>(this)->at(key);
  }
  template <class K>
  T& operator[](K&& key) {
    return emplace(std::forward<K>(key)).first->second;
  }

  // Like std::map::emplace(key, args...): an existing member is left as it is.
  template <class K, class... Args>
  std::pair<iterator, bool> emplace(K&& key, Args&&... args) {
    auto it = lowerBound(key);
    if (it != members_.end() && !less_(key, it->first)) return {it, false};
    const auto offset = it - members_.begin();
    const bool atEnd = it == members_.end();
    beforeChange();
    members_.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::forward<K>(key)),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    // Objects parsed from our own dumps arrive in key order: appending is the common case.
    if (!atEnd) std::rotate(members_.begin() + offset, members_.end() - 1, members_.end());
    return {members_.begin() + offset, true};
  }
  std::pair<iterator, bool> insert(const value_type& member) {
    return emplace(member.first, member.second);
  }
  std::pair<iterator, bool> insert(value_type&& member) {
    return emplace(std::move(member.first), std::move(member.second));
  }
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first) emplace(first->first, first->second);
  }

  iterator erase(iterator pos) { return erase(const_iterator(pos)); }
  iterator erase(const_iterator pos) {
    const auto offset = pos - members_.cbegin();
    beforeChange();
    return members_.erase(members_.cbegin() + offset);
  }
  iterator erase(const_iterator first, const_iterator last) {
    const auto from = first - members_.cbegin();
    const auto to = last - members_.cbegin();
    beforeChange();
    return members_.erase(members_.cbegin() + from, members_.cbegin() + to);
  }
  template <class K>
  requires(!std::is_convertible_v<const K&, const_iterator>) size_type erase(const K& key) {
    auto it = find(key);
    if (it == members_.end()) return 0;
    erase(it);
    return 1;
  }

  void swap(FlatObject& other) noexcept { members_.swap(other.members_); }

  friend bool operator==(const FlatObject& a, const FlatObject& b) {
    return a.members_ == b.members_;
  }
  friend auto operator<=>(const FlatObject& a, const FlatObject& b) {
    return a.members_ <=> b.members_;
  }

 private:
  template <class K>
  iterator lowerBound(const K& key) {
    // Appending in key order checks the last member only.
    if (members_.empty() || less_(members_.back().first, key)) return members_.end();
    return std::lower_bound(
        members_.begin(), members_.end(), key,
        [this](const value_type& member, const K& k) { return less_(member.first, k); });
  }

  void beforeChange() {
#ifdef MINIK8S_FLAT_OBJECT_MOVE_ON_CHANGE
    Members fresh;
    fresh.reserve(members_.size() + 1);
    std::move(members_.begin(), members_.end(), std::back_inserter(fresh));
    members_.swap(fresh);
#endif
  }

  Members members_;
  [[no_unique_address]] Compare less_;
};

}  // namespace minik8s
