#include "config/config_store.h"

namespace switchyard::config {

ConfigStore::ConfigStore(std::shared_ptr<const Config> initial, QObject *parent)
    : QObject(parent), m_current(std::move(initial))
{
    Q_ASSERT(m_current);
}

ConfigStore::ConfigStore(Config initial, QObject *parent)
    : ConfigStore(std::make_shared<const Config>(std::move(initial)), parent)
{}

void ConfigStore::replace(std::shared_ptr<const Config> next)
{
    Q_ASSERT(next);
    m_current = std::move(next);
    ++m_version;
    emit replaced(m_current);
}

} // namespace switchyard::config
