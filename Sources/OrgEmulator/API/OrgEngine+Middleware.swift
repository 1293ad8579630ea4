import Foundation
import JSON

/// A request's way through the engine: matched once to its group and route, then through the
/// group's middleware to the route's handler.
extension OrgEngine {
    /// Answers one HTTP request.
    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let match = Self.match(request) else { return .error(.notFound) }
        return await run(match.group.middleware[...], match)
    }

    /// The group and route of `request`, its parameters, and whether it writes (a body that
    /// tells — a Composite's, a Bulk job's state change — is parsed here once: to tell that, then
    /// to run it).
    static func match(_ request: EmulatorRequest) -> RouteMatch? {
        let parts = components(request.path)
        for group in routeGroups {
            guard let (groupParameters, tail) = group.match(parts) else { continue }
            var request = request
            let found = group.route(request.method, tail)
            if let writes = found?.route.writes, writes == .bySubrequests || writes == .onUploadComplete,
               request.json == nil, !request.body.isEmpty {
                request.json = try? JSONParser.parse(request.body).value
            }
            let routed = RoutedRequest(request: request, version: groupParameters["version"] ?? "",
                                       parameters: groupParameters.merging(found?.parameters ?? [:]) { $1 },
                                       rest: found?.rest ?? [], parts: Array(tail), username: nil)
            let isWrite = found?.route.writes.evaluate(method: request.method, request: request) ?? false
            return RouteMatch(group: group, route: found?.route, routed: routed, isWrite: isWrite)
        }
        return nil
    }

    /// Runs the middleware `chain` around the route's handler.
    func run(_ chain: ArraySlice<EmulatorMiddleware>, _ match: RouteMatch) async -> EmulatorResponse {
        guard let step = chain.first else { return respond(match) }
        let next = chain.dropFirst()
        var match = match
        switch step {
        case .adminAuth:
            // The admin API is outside the faults: a token is checked, never counted or expired.
            let request = match.routed.request
            let hasToken = Self.token(of: request).map { sessions.user(of: $0) != nil } ?? false
            if !hasToken && (!adminIsOpen || !Self.isLocalTool(request, instanceURL: instanceURL)) {
                return .error(APIError(401, "INVALID_SESSION_ID", "Session expired or invalid"))
            }
        case .countAndFaults:
            requestStarted()
            defer { requestFinished() }
            stats.count(kind: match.kind.rawValue, isWrite: match.isWrite)
            if let refusal = await injectFaults(isWrite: match.isWrite, arrival: match.routed.request.arrival) { return refusal }
            return await run(next, match)
        case .authenticate:
            switch authenticate(match.routed.request) {
            case .success(let username):
                match.routed.username = username
                if userIds[username] == nil { userIds[username] = userId(for: username) }
                actingUserId = userIds[username].flatMap { $0 == orgId ? nil : $0 }
            case .failure(let error):
                return .error(error)
            }
        case .apiVersion(let prefix):
            let version = match.routed.version
            guard version.hasPrefix(prefix), OrgEmulator.apiVersions.contains(String(version.dropFirst(prefix.count))) else {
                return .error(.notFound)
            }
            match.routed.version = String(version.dropFirst(prefix.count))
        case .dailyLimit(let enforced):
            dailyRequests += 1
            let limitHeader = ("Sforce-Limit-Info", "api-usage=\(dailyRequests)/\(faults.settings.dailyRequestLimit)")
            var response = enforced && dailyRequests > faults.settings.dailyRequestLimit
                ? EmulatorResponse.error(APIError(403, "REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded."))
                : await run(next, match)
            response.headers.append(limitHeader)
            return response
        case .dropAfterCommit:
            var response = await run(next, match)
            if match.isWrite, response.status < 300 || match.kind == .composite || match.kind == .collections,
               faults.dropsAnswer() {
                response.drop = true
            }
            return response
        case .deadlineTransaction:
            // A write request is one transaction that commits only inside the deadline, as an org
            // stops and rolls back a request running too long (Bulk jobs run apart, as in an org).
            guard match.isWrite && match.kind != .bulk else { return respond(match) }
            return routeWithinDeadline(arrival: match.routed.request.arrival) { db in
                var scoped = match
                scoped.routed.database = db
                return respond(scoped)
            }
        }
        return await run(next, match)
    }

    /// The route's answer; a request that matched its group only is not found.
    func respond(_ match: RouteMatch) -> EmulatorResponse {
        guard let route = match.route else { return .error(.notFound) }
        return respond(route, match.routed)
    }

    /// `route`'s answer to `routed`, its error as the answer when it throws.
    func respond(_ route: Route, _ routed: RoutedRequest) -> EmulatorResponse {
        do {
            return try route.handler(self, routed)
        } catch {
            return .error(error)
        }
    }
}
