import Foundation
import JSON

/// The emulator's routes: every endpoint declared once, with what it counts as and whether it
/// writes, in groups that share their middleware (docs/emulator.md lists the endpoints).
extension OrgEngine {
    /// Tried in order; a request matching no group is a 404 that nothing counts.
    static let routeGroups: [RouteGroup] = [
        RouteGroup("emulator", middleware: [.adminAuth], routes: [
            Route(nil, "**", .versions) { engine, r throws(APIError) in engine.handleAdmin(r.request, parts: r.rest) },
        ]),
        RouteGroup("services/oauth2", middleware: [.countAndFaults], routes: [
            Route(nil, "**", .auth) { engine, r throws(APIError) in engine.handleOAuth(r.request, parts: r.rest) },
        ]),
        RouteGroup("services/Soap/u/:version", middleware: [.countAndFaults, .apiVersion(prefix: "")], routes: [
            Route(nil, "", .auth) { engine, r throws(APIError) in engine.soapLogin(r.request, version: r.version) },
        ]),
        RouteGroup("id", middleware: [.countAndFaults, .authenticate], routes: [
            Route(nil, "**", .auth) { engine, r throws(APIError) in engine.identity(username: r.username ?? "") },
        ]),
        restGroup,
        RouteGroup("services/data", middleware: [.countAndFaults], routes: [
            Route(nil, "", .versions) { _, _ throws(APIError) in
                .json(200, .array(OrgEmulator.apiVersions.map { version in
                    ["label": .string(OrgEmulator.releaseName(version)), "url": .string("/services/data/v\(version)"), "version": .string(version)]
                }))
            },
        ]),
        RouteGroup("services/async/:version", middleware: [.countAndFaults, .apiVersion(prefix: ""), .dailyLimit(enforced: false)], routes: [
            Route(nil, "**", .bulk) { engine, r throws(APIError) in engine.bulkV1(r.request, version: r.version, parts: r.rest) },
        ]),
        // Anything else under /services: counted and faulted, then (authenticated) not found.
        RouteGroup("services", middleware: [.countAndFaults, .authenticate], routes: []),
    ]

    /// The REST API under `/services/data/vNN.N`; Composite and batch subrequests take the same
    /// routes.
    static let restGroup = RouteGroup(
        "services/data/:version",
        middleware: [.countAndFaults, .authenticate, .apiVersion(prefix: "v"), .dailyLimit(enforced: true), .dropAfterCommit, .deadlineTransaction],
        routes: restRoutes + sobjectRoutes + compositeRoutes)

    static let restRoutes: [Route] = [
        Route("GET", "", .versions) { engine, r throws(APIError) in .json(200, engine.resourceIndex(version: r.version)) },
        Route("GET", "limits/recordCount", .limits) { engine, r throws(APIError) in try engine.recordCount(r.request, in: r.database) },
        Route("GET", "limits", .limits) { engine, _ throws(APIError) in .json(200, engine.limits()) },
        Route(nil, "limits/**", .limits) { _, _ throws(APIError) in throw APIError.notFound },
        Route("GET", "query", .query, inComposite: true) { engine, r throws(APIError) in try engine.query(r.request, version: r.version, parts: r.parts, in: r.database) },
        Route("GET", "query/:locator", .query, inComposite: true) { engine, r throws(APIError) in
            try engine.query(r.request, version: r.version, parts: r.parts, in: r.database)
        },
        Route(nil, "query/**", .query, inComposite: true) { _, _ throws(APIError) in throw APIError.notFound },
        Route("GET", "queryAll", .query, inComposite: true) { engine, r throws(APIError) in
            try engine.query(r.request, version: r.version, parts: r.parts, in: r.database)
        },
        Route("GET", "queryAll/:locator", .query, inComposite: true) { engine, r throws(APIError) in
            try engine.query(r.request, version: r.version, parts: r.parts, in: r.database)
        },
        Route(nil, "queryAll/**", .query, inComposite: true) { _, _ throws(APIError) in throw APIError.notFound },
        Route("GET", "search", .search) { engine, r throws(APIError) in try engine.search(r.request, version: r.version, in: r.database) },
        Route(nil, "search/**", .search) { _, _ throws(APIError) in throw APIError.notFound },
        Route("GET", "tooling/**", .tooling) { engine, r throws(APIError) in try engine.tooling(r.request, version: r.version, parts: r.rest, in: r.database) },
        Route(nil, "tooling/**", .tooling) { _, _ throws(APIError) in throw APIError.notFound },
        Route("PATCH", "jobs/ingest/:id", .bulk, writes: .onUploadComplete) { engine, r throws(APIError) in
            try engine.bulk(r.request, version: r.version, parts: Array(r.parts.dropFirst()))
        },
        Route(nil, "jobs/**", .bulk) { engine, r throws(APIError) in try engine.bulk(r.request, version: r.version, parts: r.rest) },
    ]

    /// Composite, batch, graph, tree and sObject Collections.
    static let compositeRoutes: [Route] = [
        Route("POST", "composite", .composite, writes: .bySubrequests) { engine, r throws(APIError) in
            try engine.composite(r.request, version: r.version, in: r.database)
        },
        Route("POST", "composite/batch", .composite, writes: .bySubrequests) { engine, r throws(APIError) in try engine.batch(r.request, in: r.database) },
        Route("POST", "composite/graph", .graph, writes: .bySubrequests) { engine, r throws(APIError) in
            try engine.graph(r.request, version: r.version, in: r.database)
        },
        Route(nil, "composite/graph/**", .graph, writes: .bySubrequests) { _, _ throws(APIError) in throw APIError.notFound },
        Route("POST", "composite/tree/:type", .tree, writes: .always) { engine, r throws(APIError) in
            try engine.tree(r.request, version: r.version, type: r["type"], in: r.database)
        },
        Route(nil, "composite/tree/**", .tree, writes: .always) { _, _ throws(APIError) in throw APIError.notFound },
        // A retrieve (GET, or POST naming a type) reads; the rest writes.
        Route("GET", "composite/sobjects/:type", .collections, inComposite: true) { engine, r throws(APIError) in try engine.collections(r) },
        Route("POST", "composite/sobjects/:type", .collections, inComposite: true) { engine, r throws(APIError) in try engine.collections(r) },
        Route(nil, "composite/sobjects/**", .collections, writes: .unlessGET, inComposite: true) { engine, r throws(APIError) in
            try engine.collections(r)
        },
        Route(nil, "composite/**", .composite, writes: .bySubrequests) { _, _ throws(APIError) in throw APIError.notFound },
    ]

    /// The route of a Composite or batch subrequest's path (`/services/data/vNN.N/…`).
    static func restRoute(_ method: String, path parts: [String]) -> (route: Route, parameters: [String: String], rest: [String])? {
        guard parts.count >= 3, parts[0] == "services", parts[1] == "data" else { return nil }
        return restGroup.route(method, parts[3...])
    }

    /// Whether any subrequest of a Composite, batch or graph body writes, by its route.
    static func subrequestsWrite(_ body: JSONValue?) -> Bool {
        guard let body else { return false }
        let subrequests = body["compositeRequest"]?.arrayValue ?? body["batchRequests"]?.arrayValue
            ?? (body["graphs"]?.arrayValue ?? []).flatMap { $0["compositeRequest"]?.arrayValue ?? [] }
        return subrequests.contains { subrequest in
            let url = subrequest["url"]?.stringValue ?? ""
            let parts = components(splitURL(url.hasPrefix("/") ? url : "/services/data/" + url).0)
            let method = subrequest["method"]?.stringValue ?? "GET"
            guard let (route, _, _) = restRoute(method, path: parts) else { return method != "GET" }
            return route.writes.evaluate(method: method, request: nil)
        }
    }
}

extension Route.Writes {
    /// Whether `request` (`method`, for a subrequest) writes under this rule.
    func evaluate(method: String, request: EmulatorRequest?) -> Bool {
        switch self {
        case .never: return false
        case .always: return true
        case .unlessGET: return method != "GET"
        case .bySubrequests: return OrgEngine.subrequestsWrite(request?.json)
        case .onUploadComplete:
            return (try? request?.jsonBody()["state"]?.stringValue) == "UploadComplete"
        }
    }
}
