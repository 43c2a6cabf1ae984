#pragma once

#include "control/engine_snapshot.h"

#include <QElapsedTimer>
#include <QFrame>
#include <QList>

QT_BEGIN_NAMESPACE
class QComboBox;
class QGridLayout;
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace switchyard::ui {

// Failover drills: for every simulated provider, what it should do from now on (answer, fail with
// 500 or 429, hang, reset, cut streams), how slow it is and how often it fails. Changes go to the
// engine at once; the matrix above shows the breakers react.
class DrillsPanel : public QFrame {
    Q_OBJECT
public:
    explicit DrillsPanel(QWidget *parent = nullptr);

    // Rebuilds the rows when the set of simulated providers changes, and shows each one's mode
    // as the engine reports it unless the person just changed it here.
    void applySnapshot(const EngineSnapshot &snapshot);
    void retranslate();

    int rowCount() const { return int(m_rows.size()); }
    // The knobs a row currently asks for; for tests and the "restore" button.
    SimulatorKnobs knobsOf(int row) const;
    QString providerOf(int row) const;
    QComboBox *modeBox(int row) const;

    static QString modeName(SimulatorKnobs::Mode mode);

Q_SIGNALS:
    void knobsRequested(const QString &providerId, const switchyard::SimulatorKnobs &knobs);

private:
    struct Row {
        QString providerId;
        QLabel *name = nullptr;
        QComboBox *mode = nullptr;
        QComboBox *latency = nullptr;
        QComboBox *errorRate = nullptr;
        QElapsedTimer sinceLocalChange; // real time: the engine's lag behind a user's choice
    };

    void rebuild(const QList<ProviderHealth> &simulated);
    void fillChoices(Row &row);
    void send(int row);
    void restoreAll();

    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_restore = nullptr;
    QLabel *m_empty = nullptr;
    QLabel *m_modeHeader = nullptr;
    QLabel *m_latencyHeader = nullptr;
    QLabel *m_errorHeader = nullptr;
    QGridLayout *m_grid = nullptr;
    QList<Row> m_rows;
};

} // namespace switchyard::ui
