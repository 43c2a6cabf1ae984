#pragma once

#include "config/config.h"
#include "health/endpoint_state.h"

#include <QAbstractHttpServer>
#include <QJsonObject>
#include <QRandomGenerator>

namespace switchyard::sim {

// A built-in fake provider that speaks the OpenAI chat API over real loopback HTTP. Its latency,
// time to first token, token pace and error rate come from config, so demo traffic and drills
// exercise the same network path, parsing and streaming as a real upstream. Live knobs
// (SimulatorKnobs) make it fail on demand for failover drills.
class SimulatedProvider final : public QAbstractHttpServer {
    Q_OBJECT
public:
    SimulatedProvider(config::ProviderConfig provider, QObject *parent = nullptr);

    // Listens on 127.0.0.1 with a free port; returns it, or 0 on failure.
    quint16 listenOnLoopback();
    const QString &id() const { return m_provider.id; }

    // Applies to requests that arrive from now on; answers already under way keep their course.
    void setKnobs(const SimulatorKnobs &knobs) { m_knobs = knobs; }
    const SimulatorKnobs &knobs() const { return m_knobs; }

    // Vector length of an embeddings model that names no `dimensions`.
    static constexpr int kDefaultDimensions = 256;
    // The same unit vector for the same model and text, every time and on every machine.
    static QList<float> deterministicVector(const QString &model, QByteArrayView text,
                                            int dimensions);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    // POST /v1/embeddings: deterministic vectors of the request's `dimensions`, else the
    // model's configured ones, else kDefaultDimensions; floats or base64 as asked.
    QByteArray embeddingsAnswer(const QJsonObject &body) const;

    config::ProviderConfig m_provider;
    SimulatorKnobs m_knobs;
    QRandomGenerator m_random;
};

} // namespace switchyard::sim
