// The Routes page's rule editor on its own: nested condition groups edited at any depth, and the
// exact config::RouteRule each edit produces, the value the engine validates and applies.

#include "config/config_loader.h"
#include "config/rule_validation.h"
#include "ui/routes/condition_editor.h"
#include "ui/routes/rule_editor_panel.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>

using namespace Qt::StringLiterals;
using switchyard::ui::ConditionTreeEditor;
using switchyard::ui::RuleEditorPanel;
namespace config = switchyard::config;

namespace {

constexpr auto kRulesYaml = R"(
listen: 127.0.0.1:0
providers:
  - {id: sim-light, kind: simulated, models: [demo-light]}
  - {id: sim-pro, kind: simulated, models: [demo-pro]}
  - {id: sim-local, kind: simulated, models: [demo-light]}
tiers:
  light: {pool: [sim-light]}
  pro: {pool: [sim-pro]}
routes:
  - name: one-comparison
    when: {field: sensitivity, eq: high}
    to: {provider: sim-local}
  - name: every-request
    to: {tier: auto}
  - name: flat-any
    when: {any: [{field: task, eq: code_gen}, {field: tenant, in: [acme, globex]}]}
    to: {pool: [sim-light, sim-pro]}
  - name: three-deep
    priority: 7
    when:
      all:
        - {field: model, glob: "demo-*"}
        - any:
            - {field: header.x-team, eq: search}
            - not: {all: [{field: tokens.input, gt: "2000"}, {field: meta.app, exists: "true"}]}
        - not: {field: user, regex: "^bot-"}
    to: {tier: pro}
  - name: top-not
    when: {not: {any: [{field: tenant, eq: test}, {field: user, eq: qa}]}}
    to: {split: [{target: sim-pro, weight: 95}, {target: light, weight: 5}], key: tenant}
)";

// Every field of a rule, positions included, so a comparison shows any difference at all.
QString dump(const config::RouteCondition &condition)
{
    const QString at = u"@%1:%2"_s.arg(condition.position.line).arg(condition.position.column);
    switch (condition.kind) {
    case config::RouteCondition::Kind::Compare:
        return condition.field + u' ' + config::operatorName(condition.op) + u" ["_s +
               condition.values.join(u"|"_s) + u']' + at;
    case config::RouteCondition::Kind::All:
    case config::RouteCondition::Kind::Any:
    case config::RouteCondition::Kind::Not: {
        QStringList parts;
        for (const config::RouteCondition &child : condition.children)
            parts.append(dump(child));
        const QString kind = condition.kind == config::RouteCondition::Kind::All   ? u"all"_s
                             : condition.kind == config::RouteCondition::Kind::Any ? u"any"_s
                                                                                   : u"not"_s;
        return kind + u'(' + parts.join(u", "_s) + u')' + at;
    }
    }
    return {};
}

QString dump(const std::optional<config::RouteCondition> &condition)
{
    return condition ? dump(*condition) : u"every request"_s;
}

QString dump(const config::RouteTarget &target)
{
    return u"%1 %2 @%3:%4"_s.arg(int(target.kind))
        .arg(target.names.join(u'|'))
        .arg(target.position.line)
        .arg(target.position.column);
}

QString dump(const config::RouteRule &rule)
{
    QStringList lines{rule.name + u" priority "_s + QString::number(rule.priority),
                      u"when "_s + dump(rule.when), u"to "_s + dump(rule.to),
                      u"key "_s + config::splitKeyName(rule.splitKey)};
    for (const config::SplitBranch &branch : rule.split)
        lines.append(u"branch %1 weight %2 @%3:%4"_s.arg(dump(branch.target))
                         .arg(branch.weight)
                         .arg(branch.position.line)
                         .arg(branch.position.column));
    return lines.join(u'\n');
}

// The same, without positions: for conditions made by the form, whose positions are zero.
QString shape(const std::optional<config::RouteCondition> &condition)
{
    return dump(condition).remove(u"@0:0"_s);
}

template <typename Widget>
Widget *child(QWidget &parent, const QString &name)
{
    auto *widget = parent.findChild<Widget *>(name);
    if (!widget)
        qWarning("no widget named %s", qPrintable(name));
    return widget;
}

void chooseGroupKind(QWidget &parent, const QString &comboName, const QString &text)
{
    auto *combo = child<QComboBox>(parent, comboName);
    QVERIFY(combo);
    const int index = combo->findText(text);
    QVERIFY2(index >= 0, qPrintable(text));
    combo->setCurrentIndex(index);
}

} // namespace

class RuleEditorTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void roundTripKeepsTheRule_data();
    void roundTripKeepsTheRule();
    void buildsNestedGroupsAtAnyDepth();
    void removesPartsAtAnyDepth();
    void noneOfSeveralPartsIsNotOfAny();
    void anEmptyGroupIsReportedByTheValidator();
    void editsSplitBranchesAndKey();
    void turnsATargetIntoASplitAndBack();
    void aBranchListedTwiceIsReportedByTheValidator();

private:
    std::shared_ptr<const config::Config> m_config;
    QList<config::RouteRule> m_rules;
    config::RouteRule rule(const QString &name) const;
};

void RuleEditorTest::initTestCase()
{
    const config::LoadResult loaded = config::loadConfigText(
        kRulesYaml, u"rules.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    QVERIFY2(loaded.ok(), qPrintable(loaded.errors.value(0).toString()));
    m_config = std::make_shared<const config::Config>(*loaded.config);
    m_rules = m_config->routing.routes;
    QCOMPARE(m_rules.size(), 5);
}

config::RouteRule RuleEditorTest::rule(const QString &name) const
{
    for (const config::RouteRule &candidate : m_rules) {
        if (candidate.name == name)
            return candidate;
    }
    return {};
}

void RuleEditorTest::roundTripKeepsTheRule_data()
{
    QTest::addColumn<QString>("name");
    for (const config::RouteRule &rule : std::as_const(m_rules))
        QTest::newRow(qPrintable(rule.name)) << rule.name;
}

void RuleEditorTest::roundTripKeepsTheRule()
{
    QFETCH(QString, name);
    const config::RouteRule original = rule(name);
    RuleEditorPanel editor(m_config);
    QSignalSpy edited(&editor, &RuleEditorPanel::ruleEdited);
    editor.showRule(original);
    QCOMPARE(dump(editor.rule()), dump(original));
    QCOMPARE(edited.count(), 0); // loading is not an edit

    // A second load of what the form produced is the same again: nothing drifts per round.
    editor.showRule(editor.rule());
    QCOMPARE(dump(editor.rule()), dump(original));
}

void RuleEditorTest::buildsNestedGroupsAtAnyDepth()
{
    RuleEditorPanel editor(m_config);
    QSignalSpy edited(&editor, &RuleEditorPanel::ruleEdited);
    editor.showRule(rule(u"one-comparison"_s));

    // The top is "all of" its one comparison; a new group inside it starts as "any of".
    child<QPushButton>(editor, u"addGroupButton"_s)->click();
    QCOMPARE(child<QComboBox>(editor, u"conditionGroupKind1"_s)->currentText(),
             u"any of the conditions"_s);
    child<QComboBox>(editor, u"conditionField1.0"_s)->setCurrentText(u"tenant"_s);
    child<QLineEdit>(editor, u"conditionValue1.0"_s)->setText(u"clinic"_s);
    child<QPushButton>(editor, u"addCondition1"_s)->click();
    child<QComboBox>(editor, u"conditionField1.1"_s)->setCurrentText(u"user"_s);
    child<QComboBox>(editor, u"conditionOperator1.1"_s)->setCurrentText(u"in"_s);
    child<QLineEdit>(editor, u"conditionValue1.1"_s)->setText(u"ann, bob ,"_s);

    // A third level: a group inside the nested group, turned into "none of".
    child<QPushButton>(editor, u"addGroup1"_s)->click();
    chooseGroupKind(editor, u"conditionGroupKind1.2"_s, u"none of the conditions"_s);
    child<QComboBox>(editor, u"conditionField1.2.0"_s)->setCurrentText(u"header.x-debug"_s);
    child<QComboBox>(editor, u"conditionOperator1.2.0"_s)->setCurrentText(u"exists"_s);
    child<QLineEdit>(editor, u"conditionValue1.2.0"_s)->setText(u"true"_s);

    const config::RouteRule result = editor.rule();
    QCOMPARE(shape(result.when), u"all(sensitivity eq [high]@12:11, any(tenant eq [clinic], "
                                 u"user in [ann|bob], not(header.x-debug exists [true])))"_s);
    QVERIFY(!edited.isEmpty());
    QCOMPARE(dump(edited.last().at(0).value<config::RouteRule>()), dump(result));
    // The rest of the rule is untouched, and the engine's validator accepts the result.
    QCOMPARE(result.name, u"one-comparison"_s);
    QCOMPARE(dump(result.to), dump(rule(u"one-comparison"_s).to));
    QVERIFY(config::validateRule(result, *m_config).isEmpty());
}

void RuleEditorTest::removesPartsAtAnyDepth()
{
    RuleEditorPanel editor(m_config);
    editor.showRule(rule(u"three-deep"_s));
    QCOMPARE(child<QLineEdit>(editor, u"conditionValue1.1.0.1"_s)->text(), u"true"_s);
    QCOMPARE(child<QComboBox>(editor, u"conditionGroupKind1.1"_s)->currentText(),
             u"none of the conditions"_s);

    // The deepest comparison goes; its group keeps the other one.
    child<QToolButton>(editor, u"removeCondition1.1.0.1"_s)->click();
    QCOMPARE(shape(editor.rule().when),
             u"all(model glob [demo-*]@23:11, any(header.x-team eq [search]@25:15, "
             u"not(all(tokens.input gt [2000]@26:27)@26:21)@26:15)@24:11, "
             u"not(user regex [^bot-]@27:16)@27:11)@22:7"_s);

    // A whole nested group goes with everything in it.
    child<QToolButton>(editor, u"removeGroup1"_s)->click();
    QCOMPARE(shape(editor.rule().when),
             u"all(model glob [demo-*]@23:11, not(user regex [^bot-]@27:16)@27:11)@22:7"_s);
    QVERIFY(!editor.findChild<QWidget *>(u"conditionGroup1.1"_s));
    QVERIFY(config::validateRule(editor.rule(), *m_config).isEmpty());

    // Down to one comparison, the rule's `when` is that comparison alone, as in a file.
    child<QToolButton>(editor, u"removeGroup1"_s)->click();
    QCOMPARE(shape(editor.rule().when), u"model glob [demo-*]@23:11"_s);
    child<QToolButton>(editor, u"removeCondition0"_s)->click();
    QCOMPARE(shape(editor.rule().when), u"every request"_s);
}

void RuleEditorTest::noneOfSeveralPartsIsNotOfAny()
{
    ConditionTreeEditor editor;
    editor.setCondition(std::nullopt);
    child<QPushButton>(editor, u"addConditionButton"_s)->click();
    child<QLineEdit>(editor, u"conditionValue0"_s)->setText(u"demo-pro"_s);
    child<QPushButton>(editor, u"addConditionButton"_s)->click();
    child<QComboBox>(editor, u"conditionField1"_s)->setCurrentText(u"tenant"_s);
    child<QLineEdit>(editor, u"conditionValue1"_s)->setText(u"acme"_s);
    QCOMPARE(shape(editor.condition()), u"all(model eq [demo-pro], tenant eq [acme])"_s);

    chooseGroupKind(editor, u"conditionMatchCombo"_s, u"none of the conditions"_s);
    // The engine's `not` takes one condition: "none of" two is `not` of `any` of them.
    QCOMPARE(shape(editor.condition()), u"not(any(model eq [demo-pro], tenant eq [acme]))"_s);
    config::RouteRule result = rule(u"every-request"_s);
    result.when = editor.condition();
    QVERIFY(config::validateRule(result, *m_config).isEmpty());

    // "None of" one comparison is `not` of it alone.
    child<QToolButton>(editor, u"removeCondition1"_s)->click();
    QCOMPARE(shape(editor.condition()), u"not(model eq [demo-pro])"_s);
}

void RuleEditorTest::anEmptyGroupIsReportedByTheValidator()
{
    RuleEditorPanel editor(m_config);
    editor.showRule(rule(u"flat-any"_s));
    child<QPushButton>(editor, u"addGroupButton"_s)->click();
    QCOMPARE(child<QComboBox>(editor, u"conditionGroupKind2"_s)->currentText(),
             u"all of the conditions"_s); // inside "any of", a new group is "all of"
    child<QToolButton>(editor, u"removeCondition2.0"_s)->click();
    QVERIFY(editor.findChild<QWidget *>(u"conditionGroup2"_s)); // the group stays, empty
    QStringList problems;
    for (const config::RuleProblem &problem : config::validateRule(editor.rule(), *m_config))
        problems.append(problem.message);
    QCOMPARE(problems, QStringList{u"`all` needs a list of at least one condition"_s});
}

void RuleEditorTest::editsSplitBranchesAndKey()
{
    RuleEditorPanel editor(m_config);
    QSignalSpy edited(&editor, &RuleEditorPanel::ruleEdited);
    const config::RouteRule original = rule(u"top-not"_s);
    editor.showRule(original);
    QCOMPARE(child<QComboBox>(editor, u"targetKindCombo"_s)->currentText(), u"Canary split"_s);
    QCOMPARE(child<QComboBox>(editor, u"splitKeyCombo"_s)->currentText(), u"tenant"_s);
    QCOMPARE(child<QComboBox>(editor, u"splitBranchTarget0"_s)->currentText(), u"sim-pro"_s);
    QCOMPARE(child<QComboBox>(editor, u"splitBranchKind1"_s)->currentText(), u"Tier"_s);
    QCOMPARE(child<QComboBox>(editor, u"splitBranchTarget1"_s)->currentText(), u"light"_s);
    QCOMPARE(child<QLabel>(editor, u"splitBranchShare0"_s)->text(), u"95 %"_s);

    child<QSpinBox>(editor, u"splitBranchWeight1"_s)->setValue(15);
    QCOMPARE(child<QLabel>(editor, u"splitBranchShare1"_s)->text(), u"14 %"_s);
    auto *key = child<QComboBox>(editor, u"splitKeyCombo"_s);
    key->setCurrentIndex(key->findText(u"session"_s));

    // A new branch names a provider no branch uses yet, and takes nothing until raised.
    child<QPushButton>(editor, u"addSplitBranch"_s)->click();
    QCOMPARE(child<QComboBox>(editor, u"splitBranchTarget2"_s)->currentText(), u"sim-light"_s);
    QCOMPARE(child<QSpinBox>(editor, u"splitBranchWeight2"_s)->value(), 0);
    auto *kind = child<QComboBox>(editor, u"splitBranchKind2"_s);
    kind->setCurrentIndex(kind->findText(u"Pool"_s));
    child<QComboBox>(editor, u"splitBranchTarget2"_s)->setCurrentText(u"sim-light, sim-local"_s);
    child<QSpinBox>(editor, u"splitBranchWeight2"_s)->setValue(10);
    child<QToolButton>(editor, u"removeSplitBranch0"_s)->click();

    const config::RouteRule result = editor.rule();
    QCOMPARE(config::splitKeyName(result.splitKey), u"session"_s);
    QStringList branches;
    for (const config::SplitBranch &branch : result.split)
        branches.append(u"%1 %2"_s.arg(branch.target.label()).arg(branch.weight));
    QCOMPARE(branches, (QStringList{u"light 15"_s, u"[sim-light, sim-local] 10"_s}));
    QCOMPARE(result.split.first().target.kind, config::RouteTarget::Kind::Tier);
    QCOMPARE(result.split.last().target.kind, config::RouteTarget::Kind::Pool);
    // The kept branch is the file's, position and all; the condition is untouched.
    QCOMPARE(result.split.first().position.line, original.split.last().position.line);
    QCOMPARE(dump(result.when), dump(original.when));
    QCOMPARE(dump(edited.last().at(0).value<config::RouteRule>()), dump(result));
    QVERIFY(config::validateRule(result, *m_config).isEmpty());
}

void RuleEditorTest::turnsATargetIntoASplitAndBack()
{
    RuleEditorPanel editor(m_config);
    const config::RouteRule original = rule(u"one-comparison"_s);
    editor.showRule(original);
    QVERIFY(!child<QWidget>(editor, u"splitEditor"_s)->isVisibleTo(&editor));

    // All traffic stays where it went; a second branch waits at weight 0 on another provider.
    child<QComboBox>(editor, u"targetKindCombo"_s)->setCurrentIndex(3);
    QVERIFY(child<QWidget>(editor, u"splitEditor"_s)->isVisibleTo(&editor));
    config::RouteRule result = editor.rule();
    QCOMPARE(result.split.size(), 2);
    QCOMPARE(dump(result.split[0].target), dump(original.to));
    QCOMPARE(result.split[0].weight, 100);
    QCOMPARE(result.split[1].target.label(), u"sim-light"_s);
    QCOMPARE(result.split[1].weight, 0);
    QCOMPARE(child<QLabel>(editor, u"splitBranchShare0"_s)->text(), u"100 %"_s);
    QVERIFY(config::validateRule(result, *m_config).isEmpty());

    // Back to one provider: the split is gone, the target is the first provider offered.
    child<QComboBox>(editor, u"targetKindCombo"_s)->setCurrentIndex(0);
    result = editor.rule();
    QVERIFY(result.split.isEmpty());
    QCOMPARE(result.to.kind, config::RouteTarget::Kind::Provider);
    QCOMPARE(result.to.names, QStringList{u"sim-light"_s});
}

void RuleEditorTest::aBranchListedTwiceIsReportedByTheValidator()
{
    RuleEditorPanel editor(m_config);
    editor.showRule(rule(u"top-not"_s));
    auto *kind = child<QComboBox>(editor, u"splitBranchKind1"_s);
    kind->setCurrentIndex(kind->findText(u"Provider"_s));
    child<QComboBox>(editor, u"splitBranchTarget1"_s)->setCurrentText(u"sim-pro"_s);
    QStringList problems;
    for (const config::RuleProblem &problem : config::validateRule(editor.rule(), *m_config))
        problems.append(problem.message);
    QCOMPARE(problems, QStringList{u"split lists `sim-pro` twice"_s});
}

QTEST_MAIN(RuleEditorTest)
#include "tst_rule_editor.moc"
