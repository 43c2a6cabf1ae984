// Editing a config file as text: only the changed node's text is replaced, so every comment and
// the formatting of everything else survive a write-back; the overlay built from and applied to
// such texts; JSON written as readable YAML; and the line diffs versions keep.

#include "config/text_diff.h"
#include "config/yaml_text_edit.h"
#include "lifecycle/config_overlay.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <yaml-cpp/yaml.h>

using namespace switchyard;
using namespace switchyard::config;
using namespace Qt::StringLiterals;

namespace {

QByteArray edited(const QByteArray &text, const YamlPath &path, const QByteArray &value)
{
    const YamlEditResult result = replaceYamlNode(text, path, value);
    if (const auto *error = std::get_if<QString>(&result)) {
        qWarning("edit failed: %s", qPrintable(*error));
        return "<error>";
    }
    return std::get<QByteArray>(result);
}

// The file every case starts from: comments everywhere, block and flow style, nested keys.
const QByteArray kFile = "# Gateway config: owned by the platform team.\n"
                         "listen: 127.0.0.1:8080   # loopback only\n"
                         "\n"
                         "# The gearbox\n"
                         "tiers:\n"
                         "  light: {pool: [a, b], timeout: 8s}  # fast\n"
                         "  pro:\n"
                         "    pool: [c]\n"
                         "    # thirty seconds for the big ones\n"
                         "    timeout: 30s\n"
                         "\n"
                         "routes:\n"
                         "  # first rule\n"
                         "  - name: one\n"
                         "    priority: 10   # high\n"
                         "    to: {provider: a}\n"
                         "  # second rule\n"
                         "  - name: two\n"
                         "    priority: 0\n"
                         "    to: {tier: auto}\n"
                         "\n"
                         "# the chain, last\n"
                         "fallback_chain: [a, b, c]\n";

} // namespace

class YamlTextEditTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void replacingANodeKeepsEverythingElse_data()
    {
        QTest::addColumn<QStringList>("path");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("before");
        QTest::addColumn<QByteArray>("after");

        // A scalar keeps the comment at the end of its line.
        QTest::newRow("scalar with a comment after it")
            << QStringList{u"listen"_s} << QByteArray("0.0.0.0:9000")
            << QByteArray("listen: 127.0.0.1:8080   # loopback only\n")
            << QByteArray("listen: 0.0.0.0:9000   # loopback only\n");
        // A flow value is replaced in place, on its line, with its comment.
        QTest::newRow("flow map stays on its line")
            << QStringList{u"tiers"_s, u"light"_s} << QByteArray("{pool: [a], timeout: 5s}")
            << QByteArray("  light: {pool: [a, b], timeout: 8s}  # fast\n")
            << QByteArray("  light: {pool: [a], timeout: 5s}  # fast\n");
        // A nested scalar under a comment: the comment before it stays.
        QTest::newRow("nested key after a comment")
            << QStringList{u"tiers"_s, u"pro"_s, u"timeout"_s} << QByteArray("45s")
            << QByteArray("    # thirty seconds for the big ones\n    timeout: 30s\n")
            << QByteArray("    # thirty seconds for the big ones\n    timeout: 45s\n");
        // A block value becomes a flow one: its lines go, the comments around it stay.
        QTest::newRow("block map becomes flow")
            << QStringList{u"tiers"_s, u"pro"_s} << QByteArray("{pool: [d], timeout: 9s}")
            << QByteArray("  pro:\n    pool: [c]\n    # thirty seconds for the big ones\n"
                          "    timeout: 30s\n\nroutes:")
            << QByteArray("  pro: {pool: [d], timeout: 9s}\n\nroutes:");
        // A flow value becomes a block, indented under its key.
        QTest::newRow("flow map becomes block")
            << QStringList{u"tiers"_s, u"light"_s} << QByteArray("pool: [a]\ntimeout: 5s\n")
            << QByteArray("  light: {pool: [a, b], timeout: 8s}  # fast\n  pro:")
            << QByteArray("  light:  # fast\n    pool: [a]\n    timeout: 5s\n  pro:");
        // One item of a list: the comments before it and before the next item stay.
        QTest::newRow("one list item")
            << QStringList{u"routes"_s, u"1"_s}
            << QByteArray("name: two\npriority: 3\nto: {tier: pro}\n")
            << QByteArray("  # second rule\n  - name: two\n    priority: 0\n    to: {tier: auto}\n"
                          "\n# the chain, last\n")
            << QByteArray("  # second rule\n  - name: two\n    priority: 3\n    to: {tier: pro}\n"
                          "\n# the chain, last\n");
        // A comment inside the replaced node described the old value and goes with it.
        QTest::newRow("comment inside the node goes with it")
            << QStringList{u"routes"_s, u"0"_s} << QByteArray("name: one\npriority: 11\n")
            << QByteArray("  - name: one\n    priority: 10   # high\n    to: {provider: a}\n"
                          "  # second rule\n")
            << QByteArray("  - name: one\n    priority: 11\n  # second rule\n");
        // The last node of the file.
        QTest::newRow("last node in the file")
            << QStringList{u"fallback_chain"_s} << QByteArray("[c]")
            << QByteArray("# the chain, last\nfallback_chain: [a, b, c]\n")
            << QByteArray("# the chain, last\nfallback_chain: [c]\n");
        // A key the file does not have is added at the end of its parent.
        QTest::newRow("new nested key under its parent")
            << QStringList{u"tiers"_s, u"pro"_s, u"retries"_s} << QByteArray("2")
            << QByteArray("    timeout: 30s\n\nroutes:")
            << QByteArray("    timeout: 30s\n    retries: 2\n\nroutes:");
        QTest::newRow("new top-level key at the end")
            << QStringList{u"probes"_s} << QByteArray("enabled: false\ninterval: 5s\n")
            << QByteArray("fallback_chain: [a, b, c]\n")
            << QByteArray("fallback_chain: [a, b, c]\nprobes:\n  enabled: false\n  interval: 5s\n");
        QTest::newRow("new list item after the last")
            << QStringList{u"routes"_s, u"2"_s} << QByteArray("name: three\npriority: 1\n")
            << QByteArray("    to: {tier: auto}\n\n")
            << QByteArray("    to: {tier: auto}\n  - name: three\n    priority: 1\n\n");
    }

    void replacingANodeKeepsEverythingElse()
    {
        QFETCH(QStringList, path);
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, before);
        QFETCH(QByteArray, after);
        QVERIFY2(kFile.contains(before), before.constData());
        QByteArray expected = kFile;
        expected.replace(before, after);
        const QByteArray result = edited(kFile, path, value);
        QCOMPARE(result, expected);
        QVERIFY(YAML::Load(result.toStdString()).IsMap());
    }

    void aBlockListAtItsKeysIndentation()
    {
        const QByteArray text = "routes:\n- name: a\n  priority: 1\n- name: b\n  priority: 2\n"
                                "tiers: {}\n";
        QCOMPARE(edited(text, {u"routes"_s}, "- name: c\n  priority: 3\n"),
                 QByteArray("routes:\n- name: c\n  priority: 3\ntiers: {}\n"));
        QCOMPARE(edited(text, {u"routes"_s, u"1"_s}, "name: b\npriority: 9\n"),
                 QByteArray("routes:\n- name: a\n  priority: 1\n- name: b\n  priority: 9\n"
                            "tiers: {}\n"));
    }

    void theLastLineWithoutALineEnd()
    {
        QCOMPARE(edited("a: 1\nb: 2", {u"b"_s}, "3"), QByteArray("a: 1\nb: 3"));
        QCOMPARE(edited("a: 1\nb:\n  - x", {u"b"_s}, "- y\n- z\n"),
                 QByteArray("a: 1\nb:\n  - y\n  - z"));
        QCOMPARE(edited("a: 1", {u"c"_s}, "2"), QByteArray("a: 1\nc: 2\n"));
    }

    void anEmptyValueIsFilled()
    {
        QCOMPARE(edited("a:\nb: 2\n", {u"a"_s}, "- x\n- y\n"),
                 QByteArray("a:\n  - x\n  - y\nb: 2\n"));
        QCOMPARE(edited("a: # later\nb: 2\n", {u"a"_s}, "1"), QByteArray("a: 1 # later\nb: 2\n"));
    }

    void whatCannotBeEditedInPlaceSaysWhy()
    {
        const YamlEditResult flowParent = replaceYamlNode("t: {a: 1}\n", {u"t"_s, u"b"_s}, "2");
        QVERIFY(std::holds_alternative<QString>(flowParent));
        QVERIFY(std::get<QString>(flowParent).contains(u"flow style"_s));
        const YamlEditResult missing = replaceYamlNode("t: 1\n", {u"x"_s, u"y"_s}, "2");
        QCOMPARE(std::get<QString>(missing), u"`x` is not in the document"_s);
        QVERIFY(std::holds_alternative<QString>(replaceYamlNode("a: [\n", {u"a"_s}, "1")));
    }

    void removingAndReadingTopLevelKeys()
    {
        // Its comment lines go with it; the blank line and the next key's comment stay.
        const qsizetype from = kFile.indexOf("routes:");
        const qsizetype to = kFile.indexOf("{tier: auto}\n") + 13;
        QCOMPARE(std::get<QByteArray>(removeTopLevelKey(kFile, u"routes"_s)),
                 QByteArray(kFile).remove(from, to - from));
        QCOMPARE(topLevelValueText(kFile, u"fallback_chain"_s), QByteArray("[a, b, c]"));
        QCOMPARE(topLevelValueText(kFile, u"tiers"_s),
                 QByteArray("light: {pool: [a, b], timeout: 8s}  # fast\npro:\n  pool: [c]\n"
                            "  # thirty seconds for the big ones\n  timeout: 30s\n"));
        QCOMPARE(topLevelKeys(kFile),
                 QStringList({u"listen"_s, u"tiers"_s, u"routes"_s, u"fallback_chain"_s}));
        QVERIFY(sameYamlData("a: {b: 1}\n", "# same\na:\n  b: 1\n"));
        QVERIFY(!sameYamlData("a: 1\n", "a: 2\n"));
    }

    void theOverlayRoundTrips()
    {
        QByteArray running = edited(kFile, {u"routes"_s, u"1"_s}, "name: two\npriority: 4\n");
        running = std::get<QByteArray>(removeTopLevelKey(running, u"fallback_chain"_s));
        const QByteArray overlay = lifecycle::overlayFor(kFile, running, u"gateway.yaml"_s);
        QCOMPARE(topLevelKeys(overlay), QStringList({u"routes"_s, u"fallback_chain"_s}));
        QVERIFY(overlay.contains("fallback_chain: ~\n"));
        const auto merged = lifecycle::applyOverlay(kFile, overlay);
        QVERIFY(std::holds_alternative<QByteArray>(merged));
        QVERIFY(sameYamlData(std::get<QByteArray>(merged), running));
        // The file's comments outside the replaced keys are still there.
        QVERIFY(std::get<QByteArray>(merged).contains("# thirty seconds for the big ones"));
        QCOMPARE(lifecycle::overlayFor(kFile, kFile, u"gateway.yaml"_s), QByteArray());
    }

    void jsonIsWrittenAsYamlThatReadsBackTheSame()
    {
        const QJsonArray rules =
            QJsonDocument::fromJson(
                QByteArray(
                    "[ {'name': 'chat-canary', 'priority': 50, 'when': {'field': 'model', 'eq': "
                    "'demo-chat'}, 'to': {'split': [{'target': 'sim-swift', 'weight': 90}, "
                    "{'target': 'sim-steady', 'weight': 10}], 'key': 'session'}}, {'name': 'odd: "
                    "name #1', 'priority': 0, 'to': {'tier': 'auto'}, 'when': {'field': "
                    "'tokens.input', 'gt': 1000, 'any': [], 'text': 'true'}} ]")
                    .replace('\'', '"'))
                .array();
        const QByteArray yaml = yamlFromJson(rules);
        QCOMPARE(yaml.left(79), QByteArray("- name: chat-canary\n  priority: 50\n"
                                           "  when: {field: model, eq: demo-chat}\n  to:\n"));
        QVERIFY2(yaml.contains("- name: \"odd: name #1\"\n"), yaml.constData());
        QVERIFY2(yaml.contains("text: \"true\""), yaml.constData());
        // Read back by a YAML parser, it is the same data.
        const YAML::Node node = YAML::Load(yaml.toStdString());
        QCOMPARE(node.size(), size_t(2));
        QCOMPARE(QString::fromStdString(node[1]["name"].as<std::string>()), u"odd: name #1"_s);
        QCOMPARE(node[0]["to"]["split"][1]["weight"].as<int>(), 10);
        QCOMPARE(QString::fromStdString(node[1]["when"]["text"].as<std::string>()), u"true"_s);
        QCOMPARE(node[1]["when"]["gt"].as<int>(), 1000);
    }

    void theUnifiedDiffOfTwoTexts()
    {
        QCOMPARE(unifiedDiff(u"a\nb\nc\n"_s, u"a\nb\nc\n"_s, u"x"_s, u"y"_s), QString());
        const QString before = u"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"_s;
        const QString after = u"1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\neleven\n"_s;
        QCOMPARE(unifiedDiff(before, after, u"v1"_s, u"v2"_s),
                 u"--- v1\n+++ v2\n"
                 u"@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
                 u"@@ -8,3 +8,4 @@\n 8\n 9\n 10\n+eleven\n"_s);
        QCOMPARE(unifiedDiff(QString(), u"a\n"_s, u"v1"_s, u"v2"_s),
                 u"--- v1\n+++ v2\n@@ -0,0 +1 @@\n+a\n"_s);
    }

    void sideBySideRowsPairRemovedWithAdded()
    {
        const QList<SideBySideRow> rows =
            sideBySide(diffLines({u"a"_s, u"b"_s, u"c"_s}, {u"a"_s, u"B"_s, u"B2"_s, u"c"_s}));
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[0].leftText, u"a"_s);
        QCOMPARE(rows[1].leftKind, DiffLine::Kind::Removed);
        QCOMPARE(rows[1].leftText, u"b"_s);
        QCOMPARE(rows[1].rightKind, DiffLine::Kind::Added);
        QCOMPARE(rows[1].rightText, u"B"_s);
        QCOMPARE(rows[2].leftLine, 0);
        QCOMPARE(rows[2].rightText, u"B2"_s);
        QCOMPARE(rows[3].leftLine, 3);
        QCOMPARE(rows[3].rightLine, 4);
    }
};

QTEST_GUILESS_MAIN(YamlTextEditTest)
#include "tst_yaml_text_edit.moc"
