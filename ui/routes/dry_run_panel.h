#pragma once

#include "control/routes_state.h"
#include "protocol/operation.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class RouteRulesModel;

// The Routes page's dry run: a sample request (a preset, or typed) is explained twice by the
// live router, once with the live rules and once with the edited ones, side by side. Both answers
// come from the engine's own explainRoute; tickets drop answers to an earlier run.
class DryRunPanel final : public QFrame {
    Q_OBJECT
public:
    // `editedRules` is the page's model of the rules being edited: its rules are the edited side.
    DryRunPanel(EngineBridge &bridge, const RouteRulesModel &editedRules,
                QWidget *parent = nullptr);

    // The presets, in the order the combo box lists them.
    enum class Preset {
        SimpleChat,
        CodeGeneration,
        SensitiveData,
        LongDocument,
        AgentCanaryUser,
        ResponsesRequest,
        Embeddings,
    };
    void loadPreset(Preset preset);
    // The endpoint the sample is sent to, as the endpoint combo box shows it.
    protocol::Operation operation() const;
    // Shows `operation`'s endpoint and a sample body for it, keeping the headers.
    void selectEndpoint(protocol::Operation operation, const QString &content = {});

    // Text shown for a decision, as both result panes show it.
    static QString describe(const RouteExplanation &explanation);

public Q_SLOTS:
    void runDryRun();

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void onRouteExplained(quint64 ticket, const RouteExplanation &explanation);

    EngineBridge &m_bridge;
    const RouteRulesModel &m_editedRules;

    QLabel *m_title = nullptr;
    QLabel *m_presetLabel = nullptr;
    QComboBox *m_presetCombo = nullptr;
    QLabel *m_endpointLabel = nullptr;
    QComboBox *m_endpointCombo = nullptr;
    QLabel *m_bodyLabel = nullptr;
    QPlainTextEdit *m_bodyEdit = nullptr;
    QLabel *m_headersLabel = nullptr;
    QPlainTextEdit *m_headersEdit = nullptr;
    QPushButton *m_runButton = nullptr;
    QLabel *m_liveTitle = nullptr;
    QLabel *m_editedTitle = nullptr;
    QTextBrowser *m_liveResult = nullptr;
    QTextBrowser *m_editedResult = nullptr;
    quint64 m_nextTicket = 1;
    quint64 m_liveTicket = 0;
    quint64 m_editedTicket = 0;
};

} // namespace switchyard::ui
