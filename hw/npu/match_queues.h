#pragma once
// First-in first-out queues by (source rank, tag): an NPU's receives waiting for their message, and
// messages waiting for their receive. A large collective matches millions of messages, each under a
// new key that lives for a few steps, so items come from a pool and a key costs one entry of an
// index (KeyIndex, below). A key with a single item (the usual case: a step's one receive or one
// early message) is kept in a slot inside the object, which costs no memory access of its own.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wafersim::hw {

struct MatchKey {
  int src;
  uint64_t tag;
  bool operator==(const MatchKey& o) const { return src == o.src && tag == o.tag; }
};

// An open-addressing hash map from MatchKey to a small value, in one array: a lookup costs one
// cache line, and a key comes and goes without an allocation (std::unordered_map allocated and
// freed a node per key, and chased a bucket's pointer to it: its lookups alone took 6% of a 4-D
// Themis run, whose NPUs post hundreds of receives at once). Linear probing; a removed key leaves a
// tombstone until the table is rebuilt, which happens when keys and tombstones fill half of it.
template <typename Value>
class KeyIndex {
 public:
  size_t size() const { return size_; }
  // The value under `key`, or null.
  Value* find(const MatchKey& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Entry& e = table_[i];
      if (e.state == State::Empty) return nullptr;
      if (e.state == State::Full && e.key == key) return &e.value;
    }
  }
  // The value under `key`, made from `value` if there was none (second: whether it was made).
  std::pair<Value*, bool> try_emplace(const MatchKey& key, const Value& value) {
    if ((size_ + tombstones_ + 1) * 2 > table_.size()) rebuild();
    Entry* free = nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Entry& e = table_[i];
      if (e.state == State::Full && e.key == key) return {&e.value, false};
      if (e.state == State::Tombstone && !free) free = &e;
      if (e.state == State::Empty) {
        if (!free) free = &e;
        break;
      }
    }
    if (free->state == State::Tombstone) --tombstones_;
    *free = {key, value, State::Full};
    ++size_;
    return {&free->value, true};
  }
  // Removes the key whose value `value` (from find or try_emplace) is.
  void erase(Value* value) {
    Entry* e = reinterpret_cast<Entry*>(reinterpret_cast<char*>(value) - offsetof(Entry, value));
    e->state = State::Tombstone;
    --size_;
    ++tombstones_;
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Entry& e : table_)
      if (e.state == State::Full) fn(e.key, e.value);
  }

 private:
  enum class State : uint8_t { Empty, Full, Tombstone };
  struct Entry {
    MatchKey key;
    Value value;
    State state = State::Empty;
  };
  size_t home(const MatchKey& key) const {
    const uint64_t h = (key.tag * 1000003u + static_cast<uint64_t>(key.src)) * 0x9e3779b97f4a7c15u;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  // Four times as many entries as keys (a power of two, at least 16), the tombstones dropped.
  void rebuild() {
    size_t capacity = 16;
    while (capacity < (size_ + 1) * 4) capacity *= 2;
    std::vector<Entry> old(capacity);
    old.swap(table_);
    mask_ = capacity - 1;
    tombstones_ = 0;
    for (const Entry& e : old) {
      if (e.state != State::Full) continue;
      size_t i = home(e.key);
      while (table_[i].state != State::Empty) i = (i + 1) & mask_;
      table_[i] = e;
    }
  }

  size_t size_ = 0;  // first: MatchQueues keeps it in the cache line of its slots
  size_t mask_ = 0;
  size_t tombstones_ = 0;
  std::vector<Entry> table_;
};

template <typename Item>
class alignas(64) MatchQueues {
 public:
  void push(const MatchKey& key, Item item) {
    if (!index_.find(key)) {
      Slot* free = nullptr;
      for (Slot& slot : slots_) {
        if (slot.holds(key)) {  // a second item: both go to the pool, in order
          slot.used = false;
          push_pooled(key, slot.item);
          push_pooled(key, item);
          return;
        }
        if (!slot.used && !free) free = &slot;
      }
      if (free) {
        *free = {key.tag, item, key.src, true};
        return;
      }
    }
    push_pooled(key, item);
  }

  // Takes the oldest item under `key` into `item`; false when there is none.
  bool pop(const MatchKey& key, Item& item) {
    for (Slot& slot : slots_)
      if (slot.holds(key)) {
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
      if (slot.used) fn(MatchKey{slot.src, slot.tag}, slot.item);
    index_.for_each([&](const MatchKey& key, const Span& span) {
      for (uint32_t n = span.head;; n = nodes_[n].next) {
        fn(key, nodes_[n].item);
        if (n == span.tail) break;
      }
    });
  }

 private:
  // A key lives in one slot (one item) or in the index (any number), never in both. The key's
  // parts apart, so that a slot takes 24 bytes, not 32: both slots and the index's size share the
  // queues' first cache line, all that a step's one receive or one early message reads.
  struct Slot {
    uint64_t tag = 0;
    Item item{};
    int src = 0;
    bool used = false;
    bool holds(const MatchKey& key) const { return used && src == key.src && tag == key.tag; }
  };

  void push_pooled(const MatchKey& key, Item item) {
    const uint32_t node = new_node(item);
    auto [span, fresh] = index_.try_emplace(key, Span{node, node});
    if (!fresh) {
      nodes_[span->tail].next = node;
      span->tail = node;
    }
  }

  bool pop_pooled(const MatchKey& key, Item& item) {
    Span* span = index_.find(key);
    if (!span) return false;
    const uint32_t node = span->head;
    item = nodes_[node].item;
    if (node == span->tail)
      index_.erase(span);
    else
      span->head = nodes_[node].next;
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
  KeyIndex<Span> index_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
};

}  // namespace wafersim::hw
