// block::Transactions (barrel/block/block.hpp): the public face of decode's Slots array.

#include "block/transactions.hpp"

#include <utility>

namespace barrel::block {

Transactions::Transactions() noexcept = default;

Transactions::Transactions(std::unique_ptr<Storage> storage) noexcept
    : m_storage{std::move(storage)} {
    refresh();
}

Transactions::Transactions(Transactions&& other) noexcept
    : m_storage{std::move(other.m_storage)},
      m_data{std::exchange(other.m_data, nullptr)},
      m_size{std::exchange(other.m_size, 0)} {}

Transactions& Transactions::operator=(Transactions&& other) noexcept {
    if (this != &other) {
        m_storage = std::move(other.m_storage);
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
    }
    return *this;
}

Transactions::~Transactions() = default;

void Transactions::push_back(tx::Transaction t) {
    if (!m_storage) m_storage = std::make_unique<Storage>();
    m_storage->slots.push_back(std::move(t));
    refresh();
}

void Transactions::clear() noexcept {
    if (m_storage) m_storage->slots.clear();
    refresh();
}

void Transactions::refresh() noexcept {
    m_data = m_storage ? m_storage->slots.data() : nullptr;
    m_size = m_storage ? m_storage->slots.size() : 0;
}

}  // namespace barrel::block
