import Connectors
import JSON
import Soups

/// Writes sent one at a time through the REST sObject API (or a custom target's writer).
extension SyncUpSender {
    func sendOne(_ operation: SyncUpOperation) async throws -> SyncUpOutcome {
        if let writer { return try await sendOne(operation, through: writer) }
        do {
            switch operation.kind {
            case .create:
                return .succeeded(id: try await client.create(operation.objectType, operation.fields))
            case .upsert:
                let answer = try await client.upsert(operation.objectType, externalIdField: operation.externalIdField ?? "",
                                                     value: operation.externalIdValue ?? "", operation.fields)
                return answer.created == false ? .matched(id: answer.id) : .succeeded(id: answer.id)
            case .update:
                try await client.update(operation.objectType, id: operation.recordId ?? "", operation.fields)
                return .succeeded(id: operation.recordId)
            case .delete:
                try await client.delete(operation.objectType, id: operation.recordId ?? "")
                return .succeeded(id: operation.recordId)
            }
        } catch let error as OrgAPIError {
            return .failed(Self.error(error))
        }
    }

    /// One write through the target's own methods; an error of the target's own fails the record.
    func sendOne(_ operation: SyncUpOperation, through writer: any SyncUpRecordWriter) async throws -> SyncUpOutcome {
        do {
            switch operation.kind {
            case .create, .upsert:
                var fields = operation.fields
                if let field = operation.externalIdField, let value = operation.externalIdValue { fields[field] = .string(value) }
                return .succeeded(id: try await writer.createOnServer(operation.objectType, fields: fields, org: client))
            case .update:
                try await writer.updateOnServer(operation.objectType, id: operation.recordId ?? "", fields: operation.fields, org: client)
                return .succeeded(id: operation.recordId)
            case .delete:
                try await writer.deleteOnServer(operation.objectType, id: operation.recordId ?? "", org: client)
                return .succeeded(id: operation.recordId)
            }
        } catch let error as OrgAPIError {
            return .failed(Self.error(error))
        } catch let error as OrgClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return .failed(SyncUpError(status: 0, code: "TARGET_ERROR", message: "\(error)"))
        }
    }
}
