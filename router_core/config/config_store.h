#pragma once

#include "config/config.h"

#include <QObject>
#include <memory>

namespace switchyard::config {

// The one owner of the running configuration (docs/architecture.md, "Threads": config is an
// immutable snapshot swapped whole). A request takes the snapshot in force once, when it arrives,
// and keeps it to the end; Apply (and later a reload) replaces it here and nowhere else. Parts that
// live longer than a request (the health registry, probes, admission) read the current snapshot
// when they need a value rather than keeping a copy of their section, so a replace reaches them at
// once. Engine thread only: no locks.
class ConfigStore final : public QObject {
    Q_OBJECT
public:
    explicit ConfigStore(std::shared_ptr<const Config> initial, QObject *parent = nullptr);
    explicit ConfigStore(Config initial, QObject *parent = nullptr);

    // The snapshot in force. A holder of the pointer keeps that snapshot alive after a replace.
    const std::shared_ptr<const Config> &current() const { return m_current; }
    const Config &config() const { return *m_current; }
    // 1 for the snapshot the engine started with, +1 for every replace.
    quint64 version() const { return m_version; }

    // Makes `next` the snapshot in force and announces it. The caller has validated it whole
    // and brought the health registry's endpoints in line with it first: in the engine that is
    // control::OperatorCommands::applyConfig, the one caller.
    void replace(std::shared_ptr<const Config> next);

Q_SIGNALS:
    void replaced(const std::shared_ptr<const switchyard::config::Config> &snapshot);

private:
    std::shared_ptr<const Config> m_current;
    quint64 m_version = 1;
};

} // namespace switchyard::config
