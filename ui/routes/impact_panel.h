#pragma once

#include "routing/impact_preview.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class ImpactCellsModel;
class ImpactExamplesModel;
class RouteRulesModel;

// The Routes page's impact preview: where the sampled live requests of the last hour would go
// under the edited rules, as a from -> to table with counts and shares, the requests that would
// now be refused, and the selected row's sample requests with both decisions. The engine
// computes it (EngineBridge::previewImpact); a ticket drops the answer to an earlier click.
class ImpactPanel final : public QFrame {
    Q_OBJECT
public:
    ImpactPanel(EngineBridge &bridge, const RouteRulesModel &editedRules,
                QWidget *parent = nullptr);

public Q_SLOTS:
    void previewImpact();

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void retranslateUi();
    void onImpactPreviewed(quint64 ticket, const routing::ImpactPreview &preview);
    void showSummary();
    void showCell(int row);
    void markStale();
    void fitWrappedLabels();
    static void fitToWidth(QLabel *label);

    EngineBridge &m_bridge;
    const RouteRulesModel &m_editedRules;
    ImpactCellsModel *m_cells = nullptr;
    ImpactExamplesModel *m_examples = nullptr;
    routing::ImpactPreview m_preview;
    bool m_answered = false;
    bool m_running = false;
    bool m_stale = false; // the rules were edited after the preview shown was asked for

    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_runButton = nullptr;
    QLabel *m_summary = nullptr;    // what moves and what would be refused
    QLabel *m_sampleNote = nullptr; // what was replayed: the sample's age, size and sampling
    QTableView *m_cellsView = nullptr;
    QLabel *m_examplesTitle = nullptr;
    QTableView *m_examplesView = nullptr;
    quint64 m_nextTicket = 1;
    quint64 m_ticket = 0;
};

} // namespace switchyard::ui
