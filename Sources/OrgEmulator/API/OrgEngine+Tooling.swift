import GRDB
import JSON
import SOQL

/// A minimal Tooling API (`/tooling`): `query` over the Tooling objects (EntityDefinition,
/// ApexClass, InstalledSubscriberPackage), their global and per-object describe. Other objects are
/// `INVALID_TYPE` there, as in an org.
extension OrgEngine {
    func tooling(_ request: EmulatorRequest, version: String, parts: [String], in outer: Database?) throws(APIError) -> EmulatorResponse {
        switch (parts.first ?? "", parts.count) {
        case ("query", 1):
            let text = request.query["q"] ?? ""
            if let from = try? SOQL.parseQuery(text).from.name, schema.object(from)?.tooling != true {
                throw APIError(400, "INVALID_TYPE", "sObject type '\(from)' is not supported.")
            }
            return try query(request, version: version, parts: ["query"], in: outer)
        case ("sobjects", 1):
            return .json(200, ["encoding": "UTF-8", "maxBatchSize": 200,
                               "sobjects": .array(schema.objects.filter(\.tooling).map { describeSummary($0, version: version) })])
        case ("sobjects", 3) where parts[2] == "describe":
            guard let object = schema.object(parts[1]), object.tooling else {
                throw APIError(404, "NOT_FOUND", "The requested resource does not exist")
            }
            return .json(200, describe(object, version: version))
        default:
            throw APIError.notFound
        }
    }
}
