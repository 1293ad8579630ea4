import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Testing

/// Every OAuth flow against the emulator, their failures, and that failures never show a secret.
@Suite struct AuthFlowTests {
    /// Connects with `auth`, runs one query, and checks the usage counts and the instance URL.
    func expectWorks(_ auth: OrgAuth, seedPath: String = SampleOrg.seedPath, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await withTestOrg(seedPath: seedPath) { org in
            let client = try org.client(auth: auth)
            #expect(try await client.count("SELECT COUNT() FROM Account") == 3, sourceLocation: sourceLocation)
            #expect(try await client.instanceURL == org.instanceURL, sourceLocation: sourceLocation)
            let usage = await client.usage()
            #expect(usage.byKind["auth"] == 1, sourceLocation: sourceLocation)
            #expect(usage.byKind["query"] == 1, sourceLocation: sourceLocation)
            #expect(usage.requests == 2, sourceLocation: sourceLocation)
            #expect(usage.limitInfo == "api-usage=1/15000", sourceLocation: sourceLocation)
            #expect(await org.received("auth") == 1, sourceLocation: sourceLocation)
            await client.shutdown()
        }
    }

    @Test func passwordFlow() async throws {
        try await expectWorks(.password(username: SampleOrg.username, password: SampleOrg.password, securityToken: nil,
                                        clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
    }

    /// A copy of the sample seed whose first user has the security token `token`.
    static func seedWithSecurityToken(_ token: String) throws -> String {
        try sampleSeedCopy(firstUser: ["securityToken": .string(token)])
    }

    @Test func passwordFlowWithSecurityTokenAndNoClientSecret() async throws {
        let seed = try Self.seedWithSecurityToken("TOKEN123")
        defer { try? FileManager.default.removeItem(atPath: seed) }
        try await expectWorks(.password(username: SampleOrg.username, password: SampleOrg.password, securityToken: "TOKEN123",
                                        clientId: SampleOrg.clientId, clientSecret: nil), seedPath: seed)
    }

    /// As a real org checks them: password + token exactly when the user has a token, the password
    /// alone when not; a missing, wrong or extra token is `invalid_grant`.
    @Test(arguments: [(true, nil as String?), (true, "TOKEN124"), (true, "TOKEN1234"), (false, "ANYTHING")])
    func passwordFlowChecksTheSecurityTokenExactly(userHasToken: Bool, presented: String?) async throws {
        let seed = userHasToken ? try Self.seedWithSecurityToken("TOKEN123") : SampleOrg.seedPath
        defer { if userHasToken { try? FileManager.default.removeItem(atPath: seed) } }
        try await withTestOrg(seedPath: seed) { org in
            let client = try org.client(auth: .password(username: SampleOrg.username, password: SampleOrg.password, securityToken: presented,
                                                        clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
            let error = await caught { try await client.connect() }
            #expect((error as? OrgClientError).map { if case .authenticationFailed(let message) = $0 { message.contains("invalid_grant") } else { false } } == true,
                    "\(String(describing: error))")
            await client.shutdown()
        }
    }

    @Test func refreshTokenFlow() async throws {
        try await expectWorks(.refreshToken(refreshToken: SampleOrg.refreshToken, clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
    }

    @Test func clientCredentialsFlow() async throws {
        try await expectWorks(.clientCredentials(clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
    }

    @Test func jwtBearerFlowSignsWithThePEMKey() async throws {
        let fixture = try JWTFixture()
        defer { fixture.remove() }
        try await expectWorks(.jwt(clientId: SampleOrg.clientId, username: SampleOrg.username, privateKeyFile: fixture.keyPath),
                              seedPath: fixture.seedPath)
    }

    @Test func accessTokenFlowSendsNoAuthRequest() async throws {
        try await withTestOrg { org in
            let client = try org.client(auth: .accessToken(accessToken: org.accessToken))
            #expect(try await client.count("SELECT COUNT() FROM Account") == 3)
            #expect(try await client.instanceURL == org.instanceURL)
            let usage = await client.usage()
            #expect(usage.byKind == ["query": 1])
            #expect(usage.requests == 1)
            #expect(await org.received("auth") == 0)
            await client.shutdown()
        }
    }

    @Test func sfdxAuthURLFlow() async throws {
        try await withTestOrg { org in
            // The host part may carry its scheme; plain http is accepted for loopback hosts only.
            let authURL = "force://\(SampleOrg.clientId):\(SampleOrg.clientSecret):\(SampleOrg.refreshToken)@\(org.instanceURL)"
            let client = try org.client(auth: .sfdxAuthURL(authUrl: authURL))
            #expect(try await client.count("SELECT COUNT() FROM Contact") == 3)
            #expect(try await client.instanceURL == org.instanceURL)
            #expect(await client.usage().byKind["auth"] == 1)
            await client.shutdown()
        }
    }

    @Test func sfdxAuthURLWithALoopbackHostAndNoSchemeUsesHTTP() async throws {
        try await withTestOrg { org in
            // `sf org display` prints hosts without a scheme: https for real orgs, http for loopback.
            let hostAndPort = String(org.instanceURL.dropFirst("http://".count))
            let authURL = "force://\(SampleOrg.clientId):\(SampleOrg.clientSecret):\(SampleOrg.refreshToken)@\(hostAndPort)"
            let client = try org.client(auth: .sfdxAuthURL(authUrl: authURL))
            try await client.connect()
            #expect(try await client.instanceURL == org.instanceURL)
            #expect(await client.usage().byKind["auth"] == 1)
            await client.shutdown()
        }
    }

    @Test func malformedSFDXAuthURLIsAConfigurationErrorThatDoesNotRepeatIt() async throws {
        try await withTestOrg { org in
            for authURL in ["force://\(SampleOrg.clientId):\(SampleOrg.clientSecret)@\(org.instanceURL)", "https://\(SampleOrg.clientId):x:\(SampleOrg.refreshToken)@host",
                            "force://\(SampleOrg.clientId):\(SampleOrg.clientSecret):\(SampleOrg.refreshToken)"] {
                let client = try org.client(auth: .sfdxAuthURL(authUrl: authURL))
                let error = await caught { try await client.connect() }
                guard case .invalidConfiguration? = error as? OrgClientError else {
                    Issue.record("\(authURL): expected invalidConfiguration, got \(String(describing: error))")
                    await client.shutdown()
                    continue
                }
                expectNoSecret(texts(of: error!), secrets: [SampleOrg.clientSecret, SampleOrg.refreshToken, authURL])
                #expect(await client.usage().requests == 0)
                await client.shutdown()
            }
        }
    }

    @Test func wrongPasswordIsAuthenticationFailedWithoutThePassword() async throws {
        try await withTestOrg { org in
            let wrong = "Wr0ng-Pa55word-7781"
            let token = "SecTok-99123"
            let client = try org.client(auth: .password(username: SampleOrg.username, password: wrong, securityToken: token,
                                                        clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret))
            let error = await caught { try await client.connect() }
            guard case .authenticationFailed(let message)? = error as? OrgClientError else {
                Issue.record("expected authenticationFailed, got \(String(describing: error))")
                await client.shutdown()
                return
            }
            #expect(message.contains("invalid_grant"))
            #expect(message.contains("authentication failure"))
            expectNoSecret(texts(of: error!), secrets: [wrong, token, wrong + token, SampleOrg.password, SampleOrg.clientSecret])
            // A query fails the same way and sends no REST request.
            let second = await caught { try await client.count("SELECT COUNT() FROM Account") }
            #expect((second as? OrgClientError).map { if case .authenticationFailed = $0 { true } else { false } } == true)
            expectNoSecret(second.map(texts(of:)) ?? [], secrets: [wrong, token, SampleOrg.clientSecret])
            #expect(await client.usage().byKind["query"] == nil)
            await client.shutdown()
        }
    }

    @Test func otherRefusedCredentialsNeverShowTheirSecrets() async throws {
        let fixture = try JWTFixture()
        defer { fixture.remove() }
        let otherKey = try JWTFixture()  // a key whose certificate the org does not have
        defer { otherKey.remove() }
        try await withTestOrg(seedPath: fixture.seedPath) { org in
            let cases: [(OrgAuth, [String])] = [
                (.refreshToken(refreshToken: "bogus-refresh-5521", clientId: SampleOrg.clientId, clientSecret: SampleOrg.clientSecret),
                 ["bogus-refresh-5521", SampleOrg.clientSecret]),
                (.clientCredentials(clientId: SampleOrg.clientId, clientSecret: "bogus-secret-8812"), ["bogus-secret-8812"]),
                (.password(username: SampleOrg.username, password: SampleOrg.password, securityToken: nil, clientId: SampleOrg.clientId,
                           clientSecret: "bogus-secret-1234"), [SampleOrg.password, "bogus-secret-1234"]),
                (.password(username: SampleOrg.username, password: SampleOrg.password, securityToken: nil, clientId: "nobody",
                           clientSecret: SampleOrg.clientSecret), [SampleOrg.password, SampleOrg.clientSecret]),
                (.jwt(clientId: SampleOrg.clientId, username: SampleOrg.username, privateKeyFile: otherKey.keyPath),
                 [try String(contentsOfFile: otherKey.keyPath, encoding: .utf8)]),
                (.sfdxAuthURL(authUrl: "force://\(SampleOrg.clientId):\(SampleOrg.clientSecret):bogus-refresh-7734@\(org.instanceURL)"),
                 [SampleOrg.clientSecret, "bogus-refresh-7734"]),
            ]
            for (auth, secrets) in cases {
                let client = try org.client(auth: auth)
                let error = await caught { try await client.connect() }
                if case .authenticationFailed? = error as? OrgClientError {} else {
                    Issue.record("\(secrets.first ?? ""): expected authenticationFailed, got \(String(describing: error))")
                }
                if let error { expectNoSecret(texts(of: error), secrets: secrets) }
                await client.shutdown()
            }
        }
    }

    @Test func unreadableJWTKeyIsAConfigurationError() async throws {
        try await withTestOrg { org in
            let garbage = NSTemporaryDirectory() + "not-a-key-\(UUID().uuidString).pem"
            try "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n"
                .write(toFile: garbage, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: garbage) }
            for path in ["/nonexistent/key-\(UUID().uuidString).pem", garbage] {
                let client = try org.client(auth: .jwt(clientId: SampleOrg.clientId, username: SampleOrg.username, privateKeyFile: path))
                let error = await caught { try await client.connect() }
                guard case .invalidConfiguration(let message)? = error as? OrgClientError else {
                    Issue.record("expected invalidConfiguration, got \(String(describing: error))")
                    await client.shutdown()
                    continue
                }
                #expect(message.contains(path))
                expectNoSecret(texts(of: error!), secrets: ["c2VjcmV0LWtleS1tYXRlcmlhbA=="])
                #expect(await client.usage().requests == 0)
                await client.shutdown()
            }
        }
    }

    @Test func invalidAccessTokenSurfacesTheOrgErrorWithoutTheToken() async throws {
        try await withTestOrg { org in
            let bogus = "00Dbogus!AccessToken-4471"
            let client = try org.client(auth: .accessToken(accessToken: bogus))
            let error = await caught { try await client.count("SELECT COUNT() FROM Account") }
            let apiError = try #require(error as? OrgAPIError)
            #expect(apiError.status == 401)
            #expect(apiError.errorCode == "INVALID_SESSION_ID")
            expectNoSecret(texts(of: apiError), secrets: [bogus, org.accessToken])
            // One retry after "re-authenticating" (the same token), then it gives up: no loop.
            #expect(await client.usage().byKind["query"] == 2)
            await client.shutdown()
        }
    }

    @Test func plainHTTPToANonLoopbackHostIsRefused() throws {
        let auth = OrgAuth.accessToken(accessToken: "token")
        for (instance, login) in [("http://example.my.salesforce.com", "https://login.salesforce.com"),
                                  ("https://example.my.salesforce.com", "http://login.salesforce.com"),
                                  ("http://10.0.0.5:8383", "https://login.salesforce.com"),
                                  ("not a url", "https://login.salesforce.com")] {
            do {
                _ = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: instance, loginURL: login, auth: auth))
                Issue.record("\(instance) / \(login): expected invalidConfiguration")
            } catch {
                guard case .invalidConfiguration = error else {
                    Issue.record("expected invalidConfiguration, got \(error)")
                    continue
                }
            }
        }
        // The access_token flow needs an instance URL.
        do {
            _ = try SalesforceClient(settings: OrgConnectionSettings(auth: auth))
            Issue.record("expected invalidConfiguration")
        } catch {
            guard case .invalidConfiguration = error else { Issue.record("expected invalidConfiguration, got \(error)"); return }
        }
        // Loopback over http and any https host are fine.
        for instance in ["http://127.0.0.1:8383", "http://localhost:8383", "https://example.my.salesforce.com"] {
            #expect(throws: Never.self) { _ = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: instance, auth: auth)) }
        }
    }

    @Test func credentialsDoNotShowInDescriptions() async throws {
        let settings = OrgConnectionSettings(
            instanceURL: "https://example.my.salesforce.com",
            auth: .password(username: SampleOrg.username, password: "Pa55-in-settings", securityToken: "Tok-in-settings",
                            clientId: SampleOrg.clientId, clientSecret: "Secret-in-settings"))
        var dumped = ""
        dump(settings, to: &dumped)
        let lines = ["\(settings.auth)", String(reflecting: settings.auth), "\(settings)", String(reflecting: settings), dumped]
        expectNoSecret(lines, secrets: ["Pa55-in-settings", "Tok-in-settings", "Secret-in-settings"])
        for auth in [OrgAuth.refreshToken(refreshToken: "Refresh-in-settings", clientId: "c", clientSecret: nil),
                     .accessToken(accessToken: "Access-in-settings"), .sfdxAuthURL(authUrl: "force://c:s:Refresh-in-url@host"),
                     .clientCredentials(clientId: "c", clientSecret: "Secret-in-settings")] {
            var dumpedAuth = ""
            dump(auth, to: &dumpedAuth)
            expectNoSecret(["\(auth)", String(reflecting: auth), dumpedAuth], secrets: ["Refresh-in-settings", "Access-in-settings", "Refresh-in-url",
                                                                           "Secret-in-settings", "force://c:s:"])
        }
    }
}

@Suite struct JWTAudienceTests {
    @Test func audienceFollowsTheLoginHost() {
        #expect(SalesforceClient.jwtAudience("https://login.salesforce.com") == "https://login.salesforce.com")
        #expect(SalesforceClient.jwtAudience("https://acme.my.salesforce.com") == "https://login.salesforce.com")
        #expect(SalesforceClient.jwtAudience("https://test.salesforce.com") == "https://test.salesforce.com")
        #expect(SalesforceClient.jwtAudience("https://acme--uat.sandbox.my.salesforce.com") == "https://test.salesforce.com")
        #expect(SalesforceClient.jwtAudience("https://acme.my.site.com/partners") == "https://acme.my.site.com/partners")
        #expect(SalesforceClient.jwtAudience("http://127.0.0.1:8383") == "http://127.0.0.1:8383")
    }
}
