import Connectors
import JSON
import Soups

/// Writes sent through Composite (`allOrNone` per tree) and Composite Graph requests.
extension SyncUpSender {
    func subrequest(_ operation: SyncUpOperation) -> CompositeSubrequest {
        CompositeSubrequest(method: operation.httpMethod, url: client.apiPath + operation.restPath, referenceId: operation.key.referenceId,
                            body: operation.kind == .delete ? nil : .object(operation.fields))
    }

    func outcome(_ response: CompositeSubresponse?, for operation: SyncUpOperation) -> SyncUpOutcome {
        guard let response else {
            return .failed(SyncUpError(status: 0, code: SyncUpError.noResponse, message: "the org's answer had no entry for this record"))
        }
        if (200..<300).contains(response.httpStatusCode) {
            let id = response.body["id"]?.stringValue ?? operation.recordId
            // An upsert answers 201 when it created the record; 200 (`created: false`) or, in old
            // API versions, 204 when it matched one.
            let matched = operation.kind == .upsert && response.httpStatusCode != 201 && response.body["created"]?.boolValue != true
            return matched ? .matched(id: id) : .succeeded(id: id)
        }
        let first = (response.body[0] ?? response.body).objectValue ?? ["message": .string(response.body.jsonString)]
        return .failed(SyncUpError(status: response.httpStatusCode, json: first))
    }

    func sendComposite(_ operations: [SyncUpOperation]) async throws -> [RecordKey: SyncUpOutcome] {
        let responses = try await client.composite(operations.map(subrequest), allOrNone: false)
        let byReference = Dictionary(responses.map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
        return Dictionary(uniqueKeysWithValues: operations.map { ($0.key, outcome(byReference[$0.key.referenceId], for: $0)) })
    }

    func sendGraphs(_ graphs: [[SyncUpOperation]]) async throws -> [RecordKey: SyncUpOutcome] {
        let answers = try await client.graph(graphs.map { graph in ("g" + (graph.first?.key.referenceId ?? ""), graph.map(subrequest)) })
        let byGraph = Dictionary(answers.map { ($0.graphId, $0) }, uniquingKeysWith: { $1 })
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for graph in graphs {
            let answer = byGraph["g" + (graph.first?.key.referenceId ?? "")]
            let byReference = Dictionary((answer?.responses ?? []).map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
            let rootCause = graph.lazy.compactMap { operation -> SyncUpError? in
                guard let response = byReference[operation.key.referenceId], response.httpStatusCode >= 400 else { return nil }
                let error = self.outcome(response, for: operation).error
                return error?.code == SyncUpError.processingHalted ? nil : error
            }.first
            for operation in graph {
                if answer?.isSuccessful == true {
                    outcomes[operation.key] = outcome(byReference[operation.key.referenceId], for: operation)
                } else {
                    outcomes[operation.key] = .failed(rootCause ?? SyncUpError(
                        status: 400, code: SyncUpError.processingHalted, message: "the tree's graph was rolled back"))
                }
            }
        }
        return outcomes
    }
}
