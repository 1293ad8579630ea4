import Foundation
import GRDB
import JSON

/// sObject Tree (`/composite/tree/{Type}`, all or none, 200 records) and Composite Graph
/// (`/composite/graph`, each graph its own transaction, 500 nodes).
extension OrgEngine {
    static let treeLimit = 200
    static let graphNodeLimit = 500

    func tree(_ request: EmulatorRequest, version: String, type: String, in outer: Database?) throws(APIError) -> EmulatorResponse {
        let root = try object(named: type)
        guard let records = try request.jsonBody()["records"]?.arrayValue else { throw APIError.badJSON("'records' is a required field.") }
        var levels: [[(referenceId: String, object: ObjectSchema, fields: JSONObject, parentField: String?, parentRef: String?)]] = []
        var errors: [JSONValue] = []
        var total = 0
        func collect(_ records: [JSONValue], object: ObjectSchema, depth: Int, parentField: String?, parentRef: String?) {
            for record in records {
                total += 1
                guard var fields = record.objectValue, let referenceId = fields["attributes"]?["referenceId"]?.stringValue else {
                    errors.append(["referenceId": .null, "errors": [APIError(400, "INVALID_INPUT", "Include a reference ID for each record in the request.").recordError]])
                    continue
                }
                if let declared = fields["attributes"]?["type"]?.stringValue, declared.lowercased() != object.name.lowercased() {
                    errors.append(["referenceId": .string(referenceId),
                                   "errors": [APIError(400, "INVALID_TYPE", "The record type \(declared) does not match \(object.name)").recordError]])
                }
                var children: [(ChildRelationship, [JSONValue])] = []
                for key in fields.keys {
                    if let relationship = object.childRelationship(key), let nested = fields[key]?["records"]?.arrayValue {
                        children.append((relationship, nested))
                        fields[key] = nil
                    }
                }
                fields["attributes"] = nil
                while levels.count <= depth { levels.append([]) }
                levels[depth].append((referenceId, object, fields, parentField, parentRef))
                for (relationship, nested) in children {
                    collect(nested, object: schema.object(relationship.childSObject)!, depth: depth + 1,
                            parentField: relationship.field, parentRef: referenceId)
                }
            }
        }
        collect(records, object: root, depth: 0, parentField: nil, parentRef: nil)
        guard total <= Self.treeLimit else {
            throw APIError(400, "LIMIT_EXCEEDED", "Too many records in the request: \(total); the limit is \(Self.treeLimit).")
        }
        if !errors.isEmpty { return .json(400, ["hasErrors": true, "results": .array(errors)]) }
        var results: [JSONValue] = []
        var failures: [JSONValue] = []
        do {
            try exclusiveWrite(in: outer) { db in
                var ids: [String: String] = [:]
                for level in levels {
                    for node in level {
                        var fields = node.fields
                        if let parentField = node.parentField, let parentRef = node.parentRef, let parentId = ids[parentRef] {
                            fields[parentField] = .string(parentId)
                        }
                        do {
                            let id = try createRecord(db, object: node.object, input: fields)
                            ids[node.referenceId] = id
                            results.append(["referenceId": .string(node.referenceId), "id": .string(id)])
                        } catch let error as APIError {
                            failures.append(["referenceId": .string(node.referenceId), "errors": [error.recordError]])
                        }
                    }
                }
                if !failures.isEmpty { throw TransactionAbort(error: APIError(400, "ROLLBACK", "tree failed")) }
            }
        } catch let error as APIError {
            throw error
        } catch is TransactionAbort {
            return .json(400, ["hasErrors": true, "results": .array(failures)])
        } catch {
            throw APIError.unexpected(error)
        }
        return .json(201, ["hasErrors": false, "results": .array(results)])
    }

    func graph(_ request: EmulatorRequest, version: String, in outer: Database?) throws(APIError) -> EmulatorResponse {
        guard let graphs = try request.jsonBody()["graphs"]?.arrayValue else { throw APIError.badJSON("'graphs' is a required field.") }
        let nodes = graphs.reduce(0) { $0 + ($1["compositeRequest"]?.arrayValue?.count ?? 0) }
        guard nodes <= Self.graphNodeLimit else {
            throw APIError(400, "LIMIT_EXCEEDED", "A composite graph request can have at most \(Self.graphNodeLimit) nodes; it has \(nodes).")
        }
        var output: [JSONValue] = []
        for graph in graphs {
            guard let graphId = graph["graphId"]?.stringValue, let subrequests = graph["compositeRequest"]?.arrayValue else {
                throw APIError.badJSON("Each graph needs a 'graphId' and a 'compositeRequest' array.")
            }
            try validateSubrequests(subrequests)
            let (responses, failed) = try runSubrequests(subrequests, allOrNone: true, in: outer)
            output.append(["graphId": .string(graphId), "graphResponse": ["compositeResponse": .array(responses.map(JSONValue.object))],
                           "isSuccessful": .bool(!failed)])
        }
        return .json(200, ["graphs": .array(output)])
    }
}
