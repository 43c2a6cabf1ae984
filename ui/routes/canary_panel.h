#pragma once

#include "control/routes_state.h"

#include <QFrame>
#include <QHash>
#include <QList>
#include <QTimer>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QSlider;
class QVBoxLayout;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

// The Routes page's live canary sliders: one group per rule that splits its traffic, one slider
// per branch. Moving a slider changes the live weights at once (debounced), without an Apply;
// "Reset to file" goes back to the configured weights.
class CanaryPanel final : public QFrame {
    Q_OBJECT
public:
    explicit CanaryPanel(EngineBridge &bridge, QWidget *parent = nullptr);

    // Shows the splits as they run now: rebuilds the sliders when the set of split rules changed,
    // otherwise only moves them.
    void applySplits(const QList<routing::CanarySplitState> &splits);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct BranchSlider {
        QSlider *slider = nullptr;
        QLabel *label = nullptr;
    };
    struct SplitControls {
        QWidget *box = nullptr;
        QLabel *title = nullptr;
        QPushButton *reset = nullptr;
        QList<BranchSlider> branches;
    };

    void retranslateUi();
    void rebuildCanary(const QList<routing::CanarySplitState> &splits);
    void updateCanary(const QList<routing::CanarySplitState> &splits);
    void sliderMoved(const QString &rule, int branch, int value);
    void sendCanaryWeights();

    EngineBridge &m_bridge;
    QList<routing::CanarySplitState> m_splits; // as last shown
    QLabel *m_title = nullptr;
    QLabel *m_empty = nullptr;
    QVBoxLayout *m_canaryLayout = nullptr;
    QList<SplitControls> m_splitControls;
    QStringList m_splitRules;
    QHash<QString, QList<int>> m_pendingWeights; // rule -> weights waiting for the debounce
    QTimer m_canaryDebounce;
};

} // namespace switchyard::ui
