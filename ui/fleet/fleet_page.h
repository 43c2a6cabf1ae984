#pragma once

#include "control/engine_snapshot.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace switchyard::ui {

class FleetNodesModel;
class FleetEndpointsModel;

// The Fleet tab (docs/fleet.md): the nodes sharing this node's Redis, each with what it last
// announced, and each node's view of every endpoint. On a single node it says how to make one.
class FleetPage final : public QWidget {
    Q_OBJECT
public:
    explicit FleetPage(QWidget *parent = nullptr);

    // `nowMs`: UTC milliseconds since the epoch, for how long ago a node was seen.
    void applySnapshot(const EngineSnapshot &snapshot, qint64 nowMs);
    FleetNodesModel *nodesModel() const { return m_nodes; }
    FleetEndpointsModel *endpointsModel() const { return m_endpoints; }
    QLabel *linkLabel() const { return m_link; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshHeader();
    void fitNodesTable();

    FleetNodesModel *m_nodes;
    FleetEndpointsModel *m_endpoints;
    FleetLinkState m_state;
    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_link = nullptr;
    QLabel *m_single = nullptr;
    QTableView *m_nodesView = nullptr;
    QLabel *m_endpointsTitle = nullptr;
    QLabel *m_endpointsHint = nullptr;
    QTableView *m_endpointsView = nullptr;
};

} // namespace switchyard::ui
