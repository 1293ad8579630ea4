import Foundation
import JSON
@testable import OrgEmulator
import Testing

/// Each request is matched once to one route, which says what it counts as and whether it
/// writes — the stats, the write faults and the deadline transaction all follow that.
@Suite struct RoutingTests {
    static func request(_ method: String, _ path: String, _ body: JSONValue? = nil) -> EmulatorRequest {
        EmulatorRequest(method: method, path: path, query: [:], headers: [:], body: body.map { Data($0.jsonString.utf8) } ?? Data(),
                        arrival: .now)
    }

    static let cases: [(method: String, path: String, body: JSONValue?, kind: RequestKind, writes: Bool)] = [
        ("GET", "/services/data/v62.0", nil, .versions, false),
        ("GET", "/services/data", nil, .versions, false),
        ("GET", "/services/data/v62.0/sobjects", nil, .describe, false),
        ("GET", "/services/data/v62.0/sobjects/Account", nil, .describe, false),
        ("GET", "/services/data/v62.0/sobjects/Account/describe", nil, .describe, false),
        ("POST", "/services/data/v62.0/sobjects/Account", nil, .sobject, true),
        ("GET", "/services/data/v62.0/sobjects/Account/001000000000001AAA", nil, .sobject, false),
        ("PATCH", "/services/data/v62.0/sobjects/Account/External_Id__c/X1", nil, .sobject, true),
        ("GET", "/services/data/v62.0/sobjects/Account/updated", nil, .changes, false),
        ("PUT", "/services/data/v62.0/sobjects/Account/a/b/c", nil, .sobject, true),
        ("GET", "/services/data/v62.0/query", nil, .query, false),
        ("GET", "/services/data/v62.0/queryAll/01g000000000001AAA-2000", nil, .query, false),
        ("GET", "/services/data/v62.0/limits/recordCount", nil, .limits, false),
        ("GET", "/services/data/v62.0/tooling/sobjects", nil, .tooling, false),
        ("GET", "/services/data/v62.0/composite/sobjects/Account", nil, .collections, false),
        ("POST", "/services/data/v62.0/composite/sobjects/Account", ["ids": ["x"], "fields": ["Id"]], .collections, false),
        ("POST", "/services/data/v62.0/composite/sobjects", ["records": []], .collections, true),
        ("DELETE", "/services/data/v62.0/composite/sobjects", nil, .collections, true),
        ("POST", "/services/data/v62.0/composite/tree/Account", ["records": []], .tree, true),
        ("POST", "/services/data/v62.0/composite", ["compositeRequest": [["method": "GET", "url": "/services/data/v62.0/query?q=x"]]],
         .composite, false),
        ("POST", "/services/data/v62.0/composite", ["compositeRequest": [["method": "PATCH", "url": "/services/data/v62.0/sobjects/Account/001"]]],
         .composite, true),
        ("POST", "/services/data/v62.0/composite/batch", ["batchRequests": [["method": "POST", "url": "v62.0/sobjects/Account"]]], .composite, true),
        ("POST", "/services/data/v62.0/composite/graph", ["graphs": [["compositeRequest": [["method": "GET", "url": "/services/data/v62.0/sobjects/Account/001"]]]]],
         .graph, false),
        ("PATCH", "/services/data/v62.0/jobs/ingest/750000000000001AAA", ["state": "UploadComplete"], .bulk, true),
        ("PATCH", "/services/data/v62.0/jobs/ingest/750000000000001AAA", ["state": "Aborted"], .bulk, false),
        ("POST", "/services/data/v62.0/jobs/query", ["query": "SELECT Id FROM Account"], .bulk, false),
        ("POST", "/services/async/62.0/job", nil, .bulk, false),
        ("POST", "/services/oauth2/token", nil, .auth, false),
        ("POST", "/services/Soap/u/62.0", nil, .auth, false),
        ("GET", "/id/00D000000000001AAA/005000000000001AAA", nil, .auth, false),
        ("GET", "/services/unknown", nil, .versions, false),
    ]

    @Test func everyRequestHasOneKindAndWriteRule() {
        for (method, path, body, kind, writes) in Self.cases {
            let match = OrgEngine.match(Self.request(method, path, body))
            #expect(match?.kind == kind, "\(method) \(path)")
            #expect(match?.isWrite == writes, "\(method) \(path)")
        }
        #expect(OrgEngine.match(Self.request("GET", "/elsewhere")) == nil, "outside every group: not counted")
    }

    @Test func parametersAndTheRestAreRead() throws {
        let match = try #require(OrgEngine.match(Self.request("GET", "/services/data/v62.0/sobjects/Contact/Email/a%40b.c")))
        #expect(match.routed["type"] == "Contact" && match.routed["field"] == "Email" && match.routed["value"] == "a@b.c")
        #expect(match.routed.version == "v62.0", "the API version middleware takes the v off")
        let jobs = try #require(OrgEngine.match(Self.request("GET", "/services/data/v62.0/jobs/query/750x/results")))
        #expect(jobs.routed.rest == ["query", "750x", "results"])
    }

    @Test func compositeSubrequestsTakeOnlyTheirRoutes() {
        #expect(OrgEngine.restRoute("GET", path: ["services", "data", "v62.0", "query"])?.route.inComposite == true)
        #expect(OrgEngine.restRoute("PATCH", path: ["services", "data", "v62.0", "composite", "sobjects"])?.route.inComposite == true)
        #expect(OrgEngine.restRoute("POST", path: ["services", "data", "v62.0", "jobs", "ingest"])?.route.inComposite == false)
        #expect(OrgEngine.restRoute("POST", path: ["services", "data", "v62.0", "composite", "tree", "Account"])?.route.inComposite == false)
    }
}
