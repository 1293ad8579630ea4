import Foundation
import JSON
import OrgEmulatorTesting
import Testing

/// Bearer / OAuth tokens on the REST API, and the OAuth token endpoint's flows.
@Suite struct AuthTests {
    static let invalidSession = restError("INVALID_SESSION_ID", "Session expired or invalid")

    @Test func versionsNeedNoTokenAndCarryNoLimitHeader() async throws {
        try await withEmulator { emu in
            for path in ["/services/data", "/services/data/"] {
                let reply = try await emu.send("GET", path, auth: .none)
                #expect(reply.status == 200)
                let versions = try #require(reply.json.arrayValue)
                // As an org lists them: every version from v31.0, labelled with its release.
                #expect(versions.contains(["label": "Winter '25", "url": "/services/data/v62.0", "version": "62.0"]))
                #expect(versions.first == ["label": "Summer '14", "url": "/services/data/v31.0", "version": "31.0"])
                #expect(versions.contains(["label": "Summer '26", "url": "/services/data/v67.0", "version": "67.0"]))
                #expect(versions.allSatisfy { keys($0).sorted() == ["label", "url", "version"] })
                let numbers = versions.compactMap { $0["version"]?.stringValue }.compactMap(Double.init)
                #expect(numbers == numbers.sorted(), "versions ascending")
                #expect(reply.header("Sforce-Limit-Info") == nil)
            }
        }
    }

    @Test func missingTokenIsInvalidSession() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("GET", "/limits", auth: .none)
            #expect(reply.status == 401)
            #expect(reply.json == Self.invalidSession)
            #expect(reply.header("WWW-Authenticate") == "Token")
            #expect(reply.header("Content-Type") == "application/json;charset=UTF-8")
        }
    }

    @Test func unknownTokenIsInvalidSession() async throws {
        try await withEmulator { emu in
            for auth in [Auth.token("00D000000000001!nope"), .header("Basic Zm9vOmJhcg=="), .header("Bearer")] {
                let reply = try await emu.rest("GET", "/sobjects/Account/describe", auth: auth)
                #expect(reply.status == 401)
                #expect(reply.json == Self.invalidSession)
                #expect(reply.header("WWW-Authenticate") == "Token")
            }
        }
    }

    @Test func oauthSchemeIsAccepted() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("GET", "/limits", auth: .header("OAuth \(emu.token)"))
            #expect(reply.status == 200)
            #expect(reply.json["DailyApiRequests"]?["Max"] == 15000)
        }
    }

    @Test func trailingSlashPathsWork() async throws {
        try await withEmulator { emu in
            #expect(try await emu.rest("GET", "/limits/").status == 200)
            #expect(try await emu.rest("GET", "/").status == 200)
            let created = try await emu.rest("POST", "/sobjects/Account/", json: ["Name": "Slash"])
            #expect(created.status == 201)
            let id = try #require(created.json["id"]?.stringValue)
            let fetched = try await emu.rest("GET", "/sobjects/Account/\(id)/")
            #expect(fetched.status == 200)
            #expect(fetched.json["Name"] == "Slash")
            #expect(try await emu.rest("GET", "/sobjects/Account/describe/").json["name"] == "Account")
        }
    }

    @Test func restResponsesCarryApiUsage() async throws {
        try await withEmulator { emu in
            let first = try await emu.rest("GET", "/limits")
            #expect(first.header("Sforce-Limit-Info") == "api-usage=1/15000")
            let second = try await emu.rest("GET", "/sobjects")
            #expect(second.header("Sforce-Limit-Info") == "api-usage=2/15000")
            // Errors count and carry the header too.
            let missing = try await emu.rest("GET", "/sobjects/Account/\(unusedId(prefix: "001"))")
            #expect(missing.status == 404)
            #expect(missing.header("Sforce-Limit-Info") == "api-usage=3/15000")
            let limits = try await emu.rest("GET", "/limits")
            #expect(limits.json["DailyApiRequests"] == ["Max": 15000, "Remaining": 14996])
        }
    }

    // MARK: OAuth token endpoint

    func passwordForm(password: String = SampleOrg.password, clientId: String = SampleOrg.clientId) -> [(String, String)] {
        [("grant_type", "password"), ("client_id", clientId), ("client_secret", SampleOrg.clientSecret),
         ("username", SampleOrg.username), ("password", password)]
    }

    @Test func passwordFlowIssuesAWorkingToken() async throws {
        try await withEmulator { emu in
            let reply = try await emu.oauthToken(passwordForm())
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.header("Content-Type") == "application/json;charset=UTF-8")
            let body = reply.json
            #expect(keys(body) == ["access_token", "instance_url", "id", "token_type", "issued_at", "signature"])
            #expect(body["instance_url"]?.stringValue == emu.instanceURL)
            #expect(body["instance_url"]?.stringValue?.hasSuffix("/") == false)
            #expect(body["token_type"] == "Bearer")
            let issuedAt = try #require(body["issued_at"]?.stringValue)
            #expect(issuedAt.count == 13 && issuedAt.allSatisfy(\.isNumber))

            // id = {instance}/id/{18-char org id}/{18-char user id}
            let identity = try #require(body["id"]?.stringValue)
            let parts = identity.dropFirst(emu.instanceURL.count).split(separator: "/").map(String.init)
            #expect(identity.hasPrefix(emu.instanceURL + "/id/"))
            try #require(parts.count == 3)
            #expect(parts[0] == "id")
            let orgId = parts[1], userId = parts[2]
            #expect(orgId.hasPrefix("00D") && hasValidChecksum(orgId))
            #expect(userId.hasPrefix("005") && hasValidChecksum(userId))

            let token = try #require(body["access_token"]?.stringValue)
            #expect(token.hasPrefix(String(orgId.prefix(15)) + "!"))
            #expect(token != emu.token)
            #expect(try await emu.rest("GET", "/limits", auth: .token(token)).status == 200)

            // The identity URL answers with the token.
            let me = try await emu.send("GET", identity, auth: .token(token))
            #expect(me.status == 200)
            #expect(me.json["username"]?.stringValue == SampleOrg.username)
            #expect(me.json["user_id"]?.stringValue == userId)
            #expect(me.json["organization_id"]?.stringValue == orgId)
        }
    }

    @Test func developmentTokenStartsWithTheOrgId() async throws {
        try await withEmulator { emu in
            let me = try await emu.send("GET", "/services/oauth2/userinfo")
            let orgId = try #require(me.json["organization_id"]?.stringValue)
            #expect(emu.token.hasPrefix(String(orgId.prefix(15)) + "!"))
        }
    }

    @Test func wrongPasswordIsInvalidGrant() async throws {
        try await withEmulator { emu in
            let reply = try await emu.oauthToken(passwordForm(password: "wrong"))
            #expect(reply.status == 400)
            #expect(reply.json == ["error": "invalid_grant", "error_description": "authentication failure"])
        }
    }

    @Test func unknownClientIsInvalidClientId() async throws {
        try await withEmulator { emu in
            let reply = try await emu.oauthToken(passwordForm(clientId: "nobody"))
            #expect(reply.status == 400)
            #expect(reply.json == ["error": "invalid_client_id", "error_description": "client identifier invalid"])
        }
    }

    @Test func refreshTokenFlow() async throws {
        try await withEmulator { emu in
            let reply = try await emu.oauthToken([("grant_type", "refresh_token"), ("refresh_token", SampleOrg.refreshToken),
                                                   ("client_id", SampleOrg.clientId), ("format", "json")])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["scope"] == "refresh_token full")
            #expect(reply.json["instance_url"]?.stringValue == emu.instanceURL)
            #expect(reply.json["token_type"] == "Bearer")
            #expect(reply.json["refresh_token"] == nil)
            let token = try #require(reply.json["access_token"]?.stringValue)
            #expect(try await emu.rest("GET", "/sobjects", auth: .token(token)).status == 200)

            let bad = try await emu.oauthToken([("grant_type", "refresh_token"), ("refresh_token", "stale"), ("client_id", SampleOrg.clientId)])
            #expect(bad.status == 400)
            #expect(bad.json == ["error": "invalid_grant", "error_description": "expired access/refresh token"])
        }
    }

    @Test func clientCredentialsWithBasicAuth() async throws {
        try await withEmulator { emu in
            let basic = Data("\(SampleOrg.clientId):\(SampleOrg.clientSecret)".utf8).base64EncodedString()
            let reply = try await emu.oauthToken([("grant_type", "client_credentials")], headers: ["Authorization": "Basic \(basic)"])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json["token_type"] == "Bearer")
            #expect(reply.json["instance_url"]?.stringValue == emu.instanceURL)
            let token = try #require(reply.json["access_token"]?.stringValue)
            #expect(try await emu.rest("GET", "/limits", auth: .token(token)).status == 200)

            let wrong = Data("\(SampleOrg.clientId):nope".utf8).base64EncodedString()
            let refused = try await emu.oauthToken([("grant_type", "client_credentials")], headers: ["Authorization": "Basic \(wrong)"])
            #expect(refused.status == 400)
            #expect(refused.json == ["error": "invalid_client", "error_description": "invalid client credentials"])
        }
    }

    @Test func unsupportedGrantType() async throws {
        try await withEmulator { emu in
            let reply = try await emu.oauthToken([("grant_type", "magic"), ("client_id", SampleOrg.clientId)])
            #expect(reply.status == 400)
            #expect(reply.json == ["error": "unsupported_grant_type", "error_description": "grant type not supported"])
        }
    }

    @Test func userinfo() async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("GET", "/services/oauth2/userinfo")
            #expect(reply.status == 200)
            #expect(reply.json["username"]?.stringValue == SampleOrg.username)
            #expect(reply.json["preferred_username"]?.stringValue == SampleOrg.username)
            let userId = try #require(reply.json["user_id"]?.stringValue)
            let orgId = try #require(reply.json["organization_id"]?.stringValue)
            #expect(userId.hasPrefix("005") && hasValidChecksum(userId))
            #expect(orgId.hasPrefix("00D") && hasValidChecksum(orgId))
            #expect(reply.json["id"]?.stringValue == "\(emu.instanceURL)/id/\(orgId)/\(userId)")

            let anonymous = try await emu.send("GET", "/services/oauth2/userinfo", auth: .none)
            #expect(anonymous.status == 401)
            #expect(anonymous.json == Self.invalidSession)
        }
    }

    @Test func checksumHelperAgreesWithRecordedIds() {
        // Real ids quoted in the reference, to validate the test's own checksum code.
        for id in ["0015500001QdQWaAAN", "0035500001H9cakAAB", "00U9H000000S01tUAC", "750P0000006HoS1IAK"] {
            #expect(hasValidChecksum(id), "\(id)")
        }
        #expect(!hasValidChecksum("0015500001QdQWaAAA"))
    }
}
