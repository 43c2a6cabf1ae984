#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace switchyard {

// How a command the console gave a client key ended (EngineBridge::issueClientKey,
// editClientKeyLimits, revokeClientKey): the answer the admin API gives for the same command,
// as a value. The keys themselves reach the console in the next engine snapshot.
struct ClientKeyCommandResult {
    QString keyId; // the key the command was about; an issued key's, made up when none was given
    // The key's text, for an issued key only: shown this once, kept nowhere.
    QByteArray secret;
    // Empty when the command succeeded; else the admin API's error: its message, HTTP status,
    // code and the field it names (empty when none).
    QString error;
    int status = 200;
    QString errorCode;
    QString errorField;

    bool ok() const { return error.isEmpty(); }
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::ClientKeyCommandResult)
