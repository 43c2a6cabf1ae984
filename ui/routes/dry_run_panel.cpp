#include "ui/routes/dry_run_panel.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/routes/route_rules_model.h"

#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <array>

namespace switchyard::ui {

namespace {

constexpr int kLongDocumentParagraphs = 400;

// "name: value" per line; lines without a colon are ignored.
EngineBridge::HeaderList parseHeaders(const QString &text)
{
    EngineBridge::HeaderList headers;
    for (const QString &line : text.split(u'\n', Qt::SkipEmptyParts)) {
        const qsizetype colon = line.indexOf(u':');
        if (colon <= 0)
            continue;
        headers.append(
            {line.left(colon).trimmed().toUtf8(), line.mid(colon + 1).trimmed().toUtf8()});
    }
    return headers;
}

QString cascadeStepText(routing::CascadeStep step)
{
    switch (step) {
    case routing::CascadeStep::NotUsed:
        return DryRunPanel::tr("not used");
    case routing::CascadeStep::ExplicitHint:
        return DryRunPanel::tr("1, explicit hint");
    case routing::CascadeStep::TaskTag:
        return DryRunPanel::tr("2, task tag");
    case routing::CascadeStep::InputTokens:
        return DryRunPanel::tr("3, input tokens");
    case routing::CascadeStep::Complexity:
        return DryRunPanel::tr("4, complexity score");
    case routing::CascadeStep::Default:
        return DryRunPanel::tr("5, default");
    }
    return {};
}

QString roleText(routing::CandidateRole role)
{
    switch (role) {
    case routing::CandidateRole::Primary:
        return DryRunPanel::tr("primary");
    case routing::CandidateRole::CrossTier:
        return DryRunPanel::tr("cross-tier failover");
    case routing::CandidateRole::FallbackChain:
        return DryRunPanel::tr("fallback chain");
    case routing::CandidateRole::LighterModel:
        return DryRunPanel::tr("lighter model");
    case routing::CandidateRole::OtherBranch:
        return DryRunPanel::tr("other split branch");
    }
    return {};
}

// The endpoint combo box's entries, in its order.
constexpr std::array kEndpoints{protocol::Operation::Chat, protocol::Operation::Responses,
                                protocol::Operation::Embeddings, protocol::Operation::Completions};

} // namespace

DryRunPanel::DryRunPanel(EngineBridge &bridge, const RouteRulesModel &editedRules, QWidget *parent)
    : QFrame(parent), m_bridge(bridge), m_editedRules(editedRules)
{
    setObjectName(QStringLiteral("dryRunCard"));
    setProperty("card", true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    layout->addWidget(m_title);

    // The sample above the endpoint and the Run button rather than all three on one line: the
    // card stays narrow enough for the rule editor beside it to show its fields at 1280 px.
    auto *request = new QGridLayout;
    request->setHorizontalSpacing(8);
    m_presetLabel = makeLabel(TextRole::Caption, this);
    m_presetCombo = new QComboBox(this);
    m_presetCombo->setObjectName(QStringLiteral("dryRunPresetCombo"));
    for (int preset = 0; preset <= int(Preset::Embeddings); ++preset)
        m_presetCombo->addItem(QString());
    // The endpoints are paths, the same in every language.
    m_endpointLabel = makeLabel(TextRole::Caption, this);
    m_endpointCombo = new QComboBox(this);
    m_endpointCombo->setObjectName(QStringLiteral("dryRunEndpointCombo"));
    for (protocol::Operation operation : kEndpoints)
        m_endpointCombo->addItem(protocol::operationPath(operation));
    m_runButton = new QPushButton(this);
    m_runButton->setObjectName(QStringLiteral("dryRunButton"));
    request->addWidget(m_presetLabel, 0, 0);
    request->addWidget(m_presetCombo, 0, 1, 1, 3);
    request->addWidget(m_endpointLabel, 1, 0);
    request->addWidget(m_endpointCombo, 1, 1);
    request->setColumnStretch(2, 1);
    request->addWidget(m_runButton, 1, 3);
    layout->addLayout(request);

    m_bodyLabel = makeLabel(TextRole::Caption, this);
    m_bodyEdit = new QPlainTextEdit(this);
    m_bodyEdit->setObjectName(QStringLiteral("dryRunBody"));
    m_bodyEdit->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_headersLabel = makeLabel(TextRole::Caption, this);
    m_headersEdit = new QPlainTextEdit(this);
    m_headersEdit->setObjectName(QStringLiteral("dryRunHeaders"));
    QFont mono = font();
    mono.setFamily(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    m_bodyEdit->setFont(mono);
    m_headersEdit->setFont(mono);
    layout->addWidget(m_bodyLabel);
    layout->addWidget(m_bodyEdit, 2);
    layout->addWidget(m_headersLabel);
    layout->addWidget(m_headersEdit, 1);

    auto *results = new QGridLayout;
    m_liveTitle = makeLabel(TextRole::ColumnHeader, this);
    m_editedTitle = makeLabel(TextRole::ColumnHeader, this);
    m_liveResult = new QTextBrowser(this);
    m_liveResult->setObjectName(QStringLiteral("dryRunLiveResult"));
    m_editedResult = new QTextBrowser(this);
    m_editedResult->setObjectName(QStringLiteral("dryRunEditedResult"));
    for (QTextBrowser *browser : {m_liveResult, m_editedResult}) {
        browser->setLineWrapMode(QTextEdit::WidgetWidth);
        browser->setFrameShape(QFrame::StyledPanel);
    }
    results->addWidget(m_liveTitle, 0, 0);
    results->addWidget(m_editedTitle, 0, 1);
    results->addWidget(m_liveResult, 1, 0);
    results->addWidget(m_editedResult, 1, 1);
    layout->addLayout(results, 4);

    connect(m_presetCombo, &QComboBox::activated, this,
            [this](int index) { loadPreset(Preset(index)); });
    connect(m_endpointCombo, &QComboBox::activated, this,
            [this](int index) { selectEndpoint(kEndpoints[std::size_t(index)]); });
    connect(m_runButton, &QPushButton::clicked, this, &DryRunPanel::runDryRun);
    connect(&m_bridge, &EngineBridge::routeExplained, this, &DryRunPanel::onRouteExplained);

    retranslateUi();
    loadPreset(Preset::SimpleChat);
}

void DryRunPanel::retranslateUi()
{
    m_title->setText(tr("Dry run"));
    m_presetLabel->setText(tr("Sample"));
    m_presetCombo->setItemText(int(Preset::SimpleChat), tr("Simple chat"));
    m_presetCombo->setItemText(int(Preset::CodeGeneration), tr("Code generation (pro)"));
    m_presetCombo->setItemText(int(Preset::SensitiveData), tr("Sensitive data"));
    m_presetCombo->setItemText(int(Preset::LongDocument), tr("Long document"));
    m_presetCombo->setItemText(int(Preset::AgentCanaryUser), tr("Agent canary user"));
    m_presetCombo->setItemText(int(Preset::ResponsesRequest), tr("Responses API request"));
    m_presetCombo->setItemText(int(Preset::Embeddings), tr("Embeddings"));
    m_endpointLabel->setText(tr("Endpoint"));
    m_runButton->setText(tr("Run"));
    m_bodyLabel->setText(tr("Request body"));
    m_headersLabel->setText(tr("Headers, one \"name: value\" per line"));
    m_liveTitle->setText(tr("Live rules"));
    m_editedTitle->setText(tr("With your edits"));
}

void DryRunPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QFrame::changeEvent(event);
}

void DryRunPanel::loadPreset(Preset preset)
{
    m_presetCombo->setCurrentIndex(int(preset));
    QString content = QStringLiteral("Hi! Can you suggest a name for a grey cat?");
    QString headers;
    protocol::Operation operation = protocol::Operation::Chat;
    QString model;
    switch (preset) {
    case Preset::SimpleChat:
        headers = QStringLiteral("x-switchyard-task: chat");
        break;
    case Preset::CodeGeneration:
        content = QStringLiteral("Write a C++ function that parses an ISO 8601 date.");
        headers = QStringLiteral("x-switchyard-task: code_gen\nx-switchyard-tier: pro");
        break;
    case Preset::SensitiveData:
        content = QStringLiteral("Summarise this patient record: ...");
        headers = QStringLiteral("x-switchyard-sensitivity: high\nx-switchyard-tenant: clinic");
        break;
    case Preset::LongDocument: {
        const QString paragraph =
            QStringLiteral("The quarterly report covers revenue, costs and the outlook. ");
        content = QStringLiteral("Summarise this document: ") +
                  paragraph.repeated(kLongDocumentParagraphs);
        headers = QStringLiteral("x-switchyard-task: summarize");
        break;
    }
    case Preset::AgentCanaryUser:
        model = QStringLiteral("agent-support");
        content = QStringLiteral("Where is my order #1234?");
        headers = QStringLiteral("x-switchyard-user: user-42\nx-switchyard-session: s-7");
        break;
    case Preset::ResponsesRequest:
        operation = protocol::Operation::Responses;
        content = QStringLiteral("Plan a three-day trip to Kyoto.");
        headers = QStringLiteral("x-switchyard-task: chat");
        break;
    case Preset::Embeddings:
        operation = protocol::Operation::Embeddings;
        content = QStringLiteral("Switchyard routes each request to a provider.");
        break;
    }
    m_headersEdit->setPlainText(headers);
    selectEndpoint(operation, content);
    if (!model.isEmpty()) {
        m_bodyEdit->setPlainText(m_bodyEdit->toPlainText().replace(
            QRegularExpression(QStringLiteral(R"re("model": "[^"]*")re")),
            QStringLiteral(R"("model": "%1")").arg(model)));
    }
}

protocol::Operation DryRunPanel::operation() const
{
    return kEndpoints[std::size_t(std::max(0, m_endpointCombo->currentIndex()))];
}

void DryRunPanel::selectEndpoint(protocol::Operation operation, const QString &content)
{
    const auto found = std::find(kEndpoints.cbegin(), kEndpoints.cend(), operation);
    m_endpointCombo->setCurrentIndex(int(found - kEndpoints.cbegin()));
    // The first model the config lists for the endpoint, so the sample routes as it is.
    QString model;
    for (const config::ProviderConfig &provider : m_bridge.routesState().snapshot->providers) {
        for (const config::ModelRoute &route : provider.models) {
            if (route.serves(operation)) {
                model = route.publicName;
                break;
            }
        }
        if (!model.isEmpty())
            break;
    }
    const QString text =
        content.isEmpty() ? QStringLiteral("Hi! Can you suggest a name for a grey cat?") : content;
    QString body;
    switch (operation) {
    case protocol::Operation::Chat:
    case protocol::Operation::Messages: // never chosen here: Anthropic's chat is chat
    case protocol::Operation::CountTokens:
        body = QStringLiteral(R"({
  "model": "%1",
  "messages": [
    {"role": "user", "content": "%2"}
  ]
})");
        break;
    case protocol::Operation::Responses:
        body = QStringLiteral(R"({
  "model": "%1",
  "input": "%2"
})");
        break;
    case protocol::Operation::Embeddings:
        body = QStringLiteral(R"({
  "model": "%1",
  "input": ["%2"]
})");
        break;
    case protocol::Operation::Completions:
        body = QStringLiteral(R"({
  "model": "%1",
  "prompt": "%2"
})");
        break;
    }
    m_bodyEdit->setPlainText(body.arg(model, text));
}

void DryRunPanel::runDryRun()
{
    const EngineBridge::HeaderList headers = parseHeaders(m_headersEdit->toPlainText());
    const QByteArray body = m_bodyEdit->toPlainText().toUtf8();
    m_liveTicket = m_nextTicket++;
    m_editedTicket = m_nextTicket++;
    m_liveResult->setPlainText(tr("Running..."));
    m_editedResult->setPlainText(tr("Running..."));
    m_bridge.explainRoute(m_liveTicket, std::nullopt, headers, body, operation());
    m_bridge.explainRoute(m_editedTicket, m_editedRules.rules(), headers, body, operation());
}

void DryRunPanel::onRouteExplained(quint64 ticket, const RouteExplanation &explanation)
{
    if (ticket == m_liveTicket)
        m_liveResult->setPlainText(describe(explanation));
    else if (ticket == m_editedTicket)
        m_editedResult->setPlainText(describe(explanation));
}

QString DryRunPanel::describe(const RouteExplanation &explanation)
{
    if (!explanation.error.isEmpty())
        return tr("No decision: %1").arg(explanation.error);
    const routing::RouteDecision &decision = explanation.decision;
    QStringList lines;
    const bool byModelAlone = decision.operation == protocol::Operation::Embeddings ||
                              decision.operation == protocol::Operation::Completions;
    if (byModelAlone)
        lines.append(tr("Rule: not used, %1 goes by model")
                         .arg(protocol::operationPath(decision.operation)));
    else
        lines.append(
            tr("Rule: %1").arg(decision.rule.isEmpty() ? tr("none matched") : decision.rule));
    if (byModelAlone)
        lines.append(tr("Tier: none (tiers are for chat)"));
    else if (decision.tier.isEmpty())
        lines.append(tr("Tier: none (the rule pins the target)"));
    else
        lines.append(tr("Tier: %1, cascade step %2")
                         .arg(decision.tier, cascadeStepText(decision.cascadeStep)));
    if (decision.complexityScore >= 0)
        lines.append(tr("Complexity score: %1").arg(decision.complexityScore));
    if (!decision.canarySide.isEmpty())
        lines.append(tr("Canary side: %1").arg(decision.canarySide));
    switch (decision.refusal) {
    case routing::RouteDecision::Refusal::None:
        break;
    case routing::RouteDecision::Refusal::UnknownModel:
        lines.append(tr("Refused: no provider serves model %1").arg(decision.model));
        break;
    case routing::RouteDecision::Refusal::NoCandidate:
        lines.append(tr("Refused: no endpoint of the target can take the request"));
        break;
    }
    if (!decision.candidates.isEmpty()) {
        lines.append(QString());
        lines.append(tr("Candidates:"));
        int place = 1;
        for (const routing::RouteCandidate &candidate : decision.candidates) {
            lines.append(tr("%1. %2 (%3), score %4, %5")
                             .arg(place++)
                             .arg(candidate.providerId, candidate.upstreamModel)
                             .arg(candidate.score, 0, 'f', 2)
                             .arg(roleText(candidate.role)));
            if (!candidate.reason.isEmpty())
                lines.append(QStringLiteral("    ") + candidate.reason);
        }
    }
    if (!decision.steps.isEmpty()) {
        lines.append(QString());
        lines.append(tr("Why:"));
        for (const routing::RouteStep &step : decision.steps)
            lines.append(tr("%1: %2").arg(step.stage, step.detail));
    }
    return lines.join(u'\n');
}

} // namespace switchyard::ui
