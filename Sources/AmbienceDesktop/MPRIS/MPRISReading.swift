import AmbienceCore

/// How the client learns about players: reading them, and following their signals. Desktop thread only.
///
/// Every read is a batch: the calls to all the players it concerns go out at once and share one deadline, so players
/// that do not answer cost one timeout between them, not one each (30 silent names once cost 7 s at start). A player
/// that let a read go unanswered is silent until `silentUntil`: its signals do not make it be read again before then,
/// so a player that never answers but signals at 20 Hz costs one timeout per `retryInterval`, not a backlog. What its
/// signals carry (changed values, a seek) is applied at once all the same.
extension ClientCore {
    static let matches = [
        SignalMatch.ownerChanges(of: "org.mpris.MediaPlayer2", namespace: true),
        SignalMatch(
            interface: MPRISClient.propertiesInterface, member: "PropertiesChanged", path: MPRISClient.objectPath),
        SignalMatch(interface: MPRISClient.playerInterface, member: "Seeked", path: MPRISClient.objectPath)
    ]

    func scanAll() {
        guard let names = try? connection.listNames(timeout: timeout).filter({ $0.hasPrefix(MPRISClient.namePrefix) })
        else { return }
        let present = Set(names)
        for name in players.keys where !present.contains(name) { vanish(name) }
        read(names.sorted().filter { silentUntil[$0].map { $0 <= .now } ?? true })
    }

    /// Reads everything about these players. `owners` gives the unique names already known (from a
    /// `NameOwnerChanged`); the owners of the rest are asked first, also in one batch.
    func read(_ names: [String], owners given: [String: String] = [:]) {
        guard !names.isEmpty else { return }
        var owners = given
        for name in names where owners[name] == nil { owners[name] = players[name]?.uniqueName }
        let unknown = names.filter { owners[$0] == nil }
        let asked = connection.callAll(unknown.map { daemonCall("GetNameOwner", $0) }, timeout: timeout)
        for (name, result) in zip(unknown, asked) {
            switch result {
            case .success(let reply): owners[name] = reply.first?.string
            case .failure(.remoteError): vanish(name)  // NameHasNoOwner: gone already
            case .failure: break
            }
        }
        var calls: [DBusCall] = []
        var reads: [(info: MPRISPlayerInfo, first: Int, asksProcess: Bool)] = []
        for name in names {
            guard let owner = owners[name] else { continue }
            let known = players[name].flatMap { $0.uniqueName == owner ? $0 : nil }
            reads.append((known ?? MPRISPlayerInfo(name: name, uniqueName: owner), calls.count, known == nil))
            if known == nil { calls.append(daemonCall("GetConnectionUnixProcessID", name)) }
            for interface in [MPRISClient.playerInterface, MPRISClient.rootInterface, MPRISClient.trackListInterface] {
                calls.append(
                    DBusCall(
                        destination: name, path: MPRISClient.objectPath, interface: MPRISClient.propertiesInterface,
                        member: "GetAll", arguments: [.string(interface)]))
            }
        }
        let results = connection.callAll(calls, timeout: timeout)
        for (info, first, asksProcess) in reads {
            let answers = results[(asksProcess ? first + 1 : first)...].prefix(3).map { $0 }
            var info = info
            if asksProcess { info.processID = (try? results[first].get())?.first?.integer.flatMap { Int(exactly: $0) } }
            settle(&info, answers)
        }
    }

    /// Applies one player's three `GetAll` answers (player, root, track list) and publishes it.
    private func settle(_ info: inout MPRISPlayerInfo, _ answers: [Result<[DBusValue], DesktopError>]) {
        let name = info.name
        do throws(DesktopError) {
            apply(try properties(answers[0], name), to: &info)
            apply(try properties(answers[1], name), to: &info)
            // Most players have no track list: an error reply here is the usual answer, not a fault.
            info.canEditTracks = (try? properties(answers[2], name))?["CanEditTracks"]?.bool ?? false
            info.isResponding = true
            silentUntil[name] = nil
        } catch {
            switch error {
            case .timeout:
                info.isResponding = false
                silentUntil[name] = .now + retryInterval
            case .remoteError(let errorName, _)
            where errorName.hasSuffix(".ServiceUnknown") || errorName.hasSuffix(".NameHasNoOwner"):
                vanish(name)
                return
            default:
                break  // it answers, but not the whole protocol: keep what it did say
            }
        }
        publish(info)
    }

    private func properties(_ answer: Result<[DBusValue], DesktopError>, _ name: String) throws(DesktopError)
        -> [String: DBusValue]
    {
        let reply = try answer.get()
        guard let properties = reply.first?.dict else { throw .unexpectedReply("\(name) GetAll", reply) }
        return properties
    }

    private func daemonCall(_ member: String, _ name: String) -> DBusCall {
        DBusCall(
            destination: BusNameOwners.daemon, path: "/org/freedesktop/DBus", interface: BusNameOwners.daemon,
            member: member, arguments: [.string(name)])
    }

    // MARK: Signals

    /// Handles what `receive` returned, then reads, in one batch, the players the signals said to read. Stops
    /// early when the client is stopping: a backlog is not worth finishing then.
    func handle(_ messages: [DBusMessage]) {
        var toRead: [String: String?] = [:]
        for message in messages {
            guard shared.withLock({ $0.running }) else { return }
            handle(message, reading: &toRead)
        }
        let owners = toRead.compactMapValues { $0 }
        read(toRead.keys.sorted(), owners: owners)
    }

    /// One signal. Players to be read go into `toRead` (with their new owner when the signal says).
    private func handle(_ message: DBusMessage, reading toRead: inout [String: String?]) {
        guard message.kind == .signal, let member = message.member, let sender = message.sender else { return }
        let args = message.arguments
        switch (message.interface, member) {
        case (BusNameOwners.daemon, "NameOwnerChanged"):
            guard sender == BusNameOwners.daemon, args.count == 3, let name = args[0].string,
                let newOwner = args[2].string, name.hasPrefix(MPRISClient.namePrefix)
            else { return }
            if newOwner.isEmpty {
                toRead[name] = nil
                vanish(name)
            } else {
                // A new owner is a new player: whatever the old one did, it gets a read.
                silentUntil[name] = nil
                toRead[name] = .some(newOwner)
            }
        case (MPRISClient.propertiesInterface, "PropertiesChanged"):
            guard message.path == MPRISClient.objectPath, args.count >= 2, let interface = args[0].string,
                interface == MPRISClient.playerInterface || interface == MPRISClient.rootInterface
            else { return }
            let changed = args[1].dict ?? [:]
            let invalidated = args.count > 2 ? args[2].strings ?? [] : []
            for name in names(ownedBy: sender) {
                guard var info = players[name] else { continue }
                if !info.isResponding || !invalidated.isEmpty {
                    // A silent player that signals is alive again, once its silence is over; invalidated
                    // properties must be fetched.
                    if silentUntil[name].map({ $0 <= .now }) ?? true, toRead[name] == nil { toRead[name] = .none }
                }
                // The values a signal carries are the player's own word, silent or not: one slow answer on a
                // loaded machine must not hide a change for the whole retry interval.
                apply(changed, to: &info)
                // A silent player is asked nothing more here: its signals must not each cost a timeout.
                if info.isResponding, changed["PlaybackStatus"] != nil, changed["Position"] == nil {
                    do throws(DesktopError) {
                        if let position = try position(of: name) { info.position = position }
                    } catch {
                        if case .timeout = error { info.isResponding = false; silentUntil[name] = .now + retryInterval }
                    }
                }
                publish(info)
            }
        case (MPRISClient.playerInterface, "Seeked"):
            guard message.path == MPRISClient.objectPath, let seconds = args.first.flatMap(ClientCore.seconds) else {
                return
            }
            for name in names(ownedBy: sender) {
                guard var info = players[name] else { continue }
                if !info.isResponding, silentUntil[name].map({ $0 <= .now }) ?? true, toRead[name] == nil {
                    toRead[name] = .none
                }
                info.position = seconds
                publish(info, announce: false)
                shared.withLock { post(.seeked(name, seconds), &$0) }
            }
        default:
            break
        }
    }

    /// The names the connection owns, and the other names of the same players (a signal from either is theirs).
    private func names(ownedBy uniqueName: String) -> [String] {
        let owned = players.values.filter { $0.uniqueName == uniqueName }
        return players.values.filter { info in owned.contains { MPRISPlayerInfo.samePlayer($0, info) } }.map(\.name)
            .sorted()
    }

    func position(of name: String) throws(DesktopError) -> Double? {
        let reply = try connection.call(
            destination: name, path: MPRISClient.objectPath, interface: MPRISClient.propertiesInterface,
            member: "Get", arguments: [.string(MPRISClient.playerInterface), .string("Position")],
            timeout: timeout)
        return reply.first.flatMap(ClientCore.seconds)
    }
}
