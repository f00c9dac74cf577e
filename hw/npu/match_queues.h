#pragma once
// First-in first-out queues by (source rank, tag): an NPU's receives waiting for their message, and
// messages waiting for their receive. A large collective matches millions of messages, each under a
// new key that lives for a few steps, so items come from a pool and a key costs one small node. A
// key with a single item (the usual case: a step's one receive or one early message) is kept in
// a slot inside the object, which costs no memory access of its own.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace wafersim::hw {

struct MatchKey {
  int src;
  uint64_t tag;
  bool operator==(const MatchKey& o) const { return src == o.src && tag == o.tag; }
};

template <typename Item>
class MatchQueues {
 public:
  void push(const MatchKey& key, Item item) {
    if (index_.empty() || index_.find(key) == index_.end()) {
      Slot* free = nullptr;
      for (Slot& slot : slots_) {
        if (slot.used && slot.key == key) {  // a second item: both go to the pool, in order
          slot.used = false;
          push_pooled(key, slot.item);
          push_pooled(key, item);
          return;
        }
        if (!slot.used && !free) free = &slot;
      }
      if (free) {
        *free = {key, item, true};
        return;
      }
    }
    push_pooled(key, item);
  }

  // Takes the oldest item under `key` into `item`; false when there is none.
  bool pop(const MatchKey& key, Item& item) {
    for (Slot& slot : slots_)
      if (slot.used && slot.key == key) {
        slot.used = false;
        item = slot.item;
        return true;
      }
    return pop_pooled(key, item);
  }

  size_t keys() const {
    size_t n = index_.size();
    for (const Slot& slot : slots_) n += slot.used;
    return n;
  }

  // Calls fn(key, item) for every item, oldest first within a key.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& slot : slots_)
      if (slot.used) fn(slot.key, slot.item);
    for (const auto& [key, span] : index_)
      for (uint32_t n = span.head;; n = nodes_[n].next) {
        fn(key, nodes_[n].item);
        if (n == span.tail) break;
      }
  }

 private:
  // A key lives in one slot (one item) or in the index (any number), never in both.
  struct Slot {
    MatchKey key;
    Item item;
    bool used = false;
  };

  void push_pooled(const MatchKey& key, Item item) {
    const uint32_t node = new_node(item);
    auto [it, fresh] = index_.try_emplace(key, Span{node, node});
    if (!fresh) {
      nodes_[it->second.tail].next = node;
      it->second.tail = node;
    }
  }

  bool pop_pooled(const MatchKey& key, Item& item) {
    if (index_.empty()) return false;
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    const uint32_t node = it->second.head;
    item = nodes_[node].item;
    if (node == it->second.tail)
      index_.erase(it);
    else
      it->second.head = nodes_[node].next;
    free_.push_back(node);
    return true;
  }

  struct Node {
    Item item;
    uint32_t next;
  };
  struct Span {
    uint32_t head, tail;
  };
  struct Hash {
    size_t operator()(const MatchKey& k) const {
      return std::hash<uint64_t>()(k.tag * 1000003u + static_cast<uint64_t>(k.src));
    }
  };

  uint32_t new_node(Item item) {
    if (free_.empty()) {
      nodes_.push_back({item, 0});
      return static_cast<uint32_t>(nodes_.size() - 1);
    }
    const uint32_t node = free_.back();
    free_.pop_back();
    nodes_[node] = {item, 0};
    return node;
  }

  Slot slots_[2];
  std::unordered_map<MatchKey, Span, Hash> index_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
};

}  // namespace wafersim::hw
