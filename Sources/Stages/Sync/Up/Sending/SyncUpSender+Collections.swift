import Connectors
import Formats
import JSON
import Soups

/// Writes sent through sObject Collections, alone or several calls in one Composite request
/// (with the reads of new dates that LEAVE_IF_CHANGED needs).
extension SyncUpSender {
    /// The records of a Collections create, update or upsert call.
    static func collectionRecords(_ operations: [SyncUpOperation]) -> [JSONObject] {
        operations.map { operation -> JSONObject in
            var record: JSONObject = ["attributes": ["type": .string(operation.objectType)]]
            for (name, value) in operation.fields { record[name] = value }
            if operation.kind == .update { record["Id"] = .string(operation.recordId ?? "") }
            if operation.kind == .upsert, let field = operation.externalIdField { record[field] = .string(operation.externalIdValue ?? "") }
            return record
        }
    }

    /// Each record's outcome from its Collections result.
    static func collectionOutcomes(_ operations: [SyncUpOperation], _ results: [SaveResult]) -> [RecordKey: SyncUpOutcome] {
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (operation, result) in zip(operations, results) {
            if result.success {
                let id = result.id ?? operation.recordId
                outcomes[operation.key] = operation.kind == .upsert && result.created == false ? .matched(id: id) : .succeeded(id: id)
            } else {
                outcomes[operation.key] = .failed(result.errors.first.map(Self.error)
                    ?? SyncUpError(status: 400, code: "UNKNOWN_ERROR", message: "the org refused the record without saying why"))
            }
        }
        for operation in operations.dropFirst(results.count) {
            outcomes[operation.key] = .failed(SyncUpError(status: 0, code: SyncUpError.noResponse, message: "the org's answer had no entry for this record"))
        }
        return outcomes
    }

    func sendCollection(_ call: SyncUpRequest.CollectionCall, _ operations: [SyncUpOperation]) async throws -> [RecordKey: SyncUpOutcome] {
        let results: [SaveResult]
        let records = Self.collectionRecords(operations)
        switch call {
        case .delete: results = try await client.deleteRecords(ids: operations.map { $0.recordId ?? "" })
        case .create: results = try await client.createRecords(records)
        case .update: results = try await client.updateRecords(records)
        case .upsert(let type, let field): results = try await client.upsertRecords(type, externalIdField: field, records)
        }
        return Self.collectionOutcomes(operations, results)
    }

    /// Collections calls in one Composite request. A children's call whose references cannot be
    /// resolved (a parent of the call failed) is refused whole by the org, nothing applied: the
    /// children of failed parents fail with them, the others go again once their parent's id is known.
    /// The calls are followed by one retrieve per object of ``readBack``, reading the records
    /// written; a retrieve that cannot be resolved (a write of its object failed) reads nothing.
    func sendCompositeCollections(_ parts: [SyncUpRequest.CollectionPart]) async throws -> Answer {
        let base = client.apiPath + "/composite/sobjects"
        var subrequests = parts.enumerated().map { index, part -> CompositeSubrequest in
            let records: JSONValue = ["allOrNone": false, "records": .array(Self.collectionRecords(part.operations).map(JSONValue.object))]
            switch part.call {
            case .create: return CompositeSubrequest(method: "POST", url: base, referenceId: "c\(index)", body: records)
            case .update: return CompositeSubrequest(method: "PATCH", url: base, referenceId: "c\(index)", body: records)
            case .upsert(let type, let field):
                return CompositeSubrequest(method: "PATCH", url: base + "/\(OrgPath.component(type))/\(OrgPath.component(field))",
                                           referenceId: "c\(index)", body: records)
            case .delete:
                let ids = part.operations.map { OrgPath.component($0.recordId ?? "") }.joined(separator: ",")
                return CompositeSubrequest(method: "DELETE", url: base + "?ids=\(ids)&allOrNone=false", referenceId: "c\(index)")
            }
        }
        let reads = readBackRequests(parts)
        subrequests += reads.map(\.request)
        let responses = try await client.composite(subrequests, allOrNone: false)
        let byReference = Dictionary(responses.map { ($0.referenceId, $0) }, uniquingKeysWith: { $1 })
        var outcomes: [RecordKey: SyncUpOutcome] = [:]
        for (index, part) in parts.enumerated() {
            guard let response = byReference["c\(index)"] else {
                for operation in part.operations {
                    outcomes[operation.key] = .failed(SyncUpError(status: 0, code: SyncUpError.noResponse, message: "the org's answer had no entry for this record"))
                }
                continue
            }
            if (200..<300).contains(response.httpStatusCode), let results = response.body.arrayValue {
                outcomes.merge(Self.collectionOutcomes(part.operations, results.map(SaveResult.init(json:)))) { $1 }
                continue
            }
            let error = SyncUpError(status: response.httpStatusCode,
                                    json: (response.body[0] ?? response.body).objectValue ?? ["message": .string(response.body.jsonString)])
            for operation in part.operations {
                if let link = operation.journalLink, let parent = outcomes[RecordKey(tree: operation.key.tree, child: nil)], !parent.isSuccess {
                    let reason = parent.error.map { "\($0.code): \($0.message)" } ?? "its outcome is unknown"
                    outcomes[operation.key] = .failed(SyncUpError(status: 424, code: "PARENT_NOT_SYNCED",
                                                                  message: "not sent: its parent was not created (\(reason))", fields: [link]))
                } else if operation.journalLink != nil && error.code == SyncUpError.processingHalted {
                    outcomes[operation.key] = .failed(SyncUpError(status: 424, code: SyncUpError.siblingParentFailed,
                        message: "not applied: a parent of another record of its call failed; sent again with its parent's id"))
                } else {
                    outcomes[operation.key] = .failed(error)
                }
            }
        }
        var readBack: [RecordKey: JSONObject] = [:]
        for read in reads {
            guard let response = byReference[read.request.referenceId], (200..<300).contains(response.httpStatusCode),
                  let records = response.body.arrayValue else { continue }
            // Each record under the id its write was given.
            var byId: [String: JSONObject] = [:]
            for case let record? in records.lazy.map(\.objectValue) { byId[SalesforceId.key(record["Id"])] = record }
            for key in read.keys {
                if let id = outcomes[key]?.acceptedId, let record = byId[SalesforceId.key(.string(id))] { readBack[key] = record }
            }
        }
        return Answer(outcomes: outcomes, readBack: readBack)
    }

    /// One retrieve per object among the calls' writes that ``readBack`` reads, its ids
    /// references to the writes' results (`@{cN[i].id}`), with the records it reads. Updates
    /// are referred to as well: the reference makes the retrieve wait for the write (a Composite
    /// request may otherwise run independent subrequests in any order).
    func readBackRequests(_ parts: [SyncUpRequest.CollectionPart]) -> [(request: CompositeSubrequest, keys: [RecordKey])] {
        guard !readBack.fields.isEmpty else { return [] }
        var byObject: [(type: String, field: String, ids: [String], keys: [RecordKey])] = []
        let read = readBack.fields(after: parts.map { ($0.call, $0.objectType, $0.parents) })
        for (index, part) in parts.enumerated() {
            guard let field = read[index] else { continue }
            let group = byObject.firstIndex { $0.type == part.objectType } ?? byObject.count
            if group == byObject.count { byObject.append((part.objectType, field, [], [])) }
            for (position, operation) in part.operations.enumerated() {
                byObject[group].ids.append("@{c\(index)[\(position)].id}")
                byObject[group].keys.append(operation.key)
            }
        }
        return byObject.enumerated().map { index, read in
            let fields = read.field == "Id" ? ["Id"] : ["Id", read.field]
            return (client.retrieveSubrequest(read.type, ids: read.ids, fields: fields, referenceId: "r\(index)"), read.keys)
        }
    }
}
