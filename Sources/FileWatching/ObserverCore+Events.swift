/// Kernel-like events in, changes out.
extension ObserverCore {
    /// What caused a look at one directory entry.
    enum Cause {
        case created
        case deleted
        /// Moved in from outside the watched tree (or from a hidden or excluded name).
        case movedIn
        /// Moved in as ``movedIn``, in exchange for the item at the name,
        /// which the same rename took away (`renameat2` with
        /// `RENAME_EXCHANGE`: the kernel reports two renames, the second
        /// taking the name's old item away at once).
        case exchangedIn
        /// Moved out of the watched tree.
        case movedOut
        case written
        case closedWrite
        case attributes

        /// Moved in whole, from outside the tree or in an exchange.
        var isArrival: Bool { self == .movedIn || self == .exchangedIn }
        /// An event about an item's content or attributes, which changes no name.
        var keepsNames: Bool { self == .written || self == .closedWrite || self == .attributes }
    }

    /// Handles one read of events, in order. A `movedFrom` whose `movedTo` is
    /// not in `events` is taken as a move out of the tree: the caller holds
    /// such a half back briefly for the rest of its rename (``MovePairing``).
    ///
    /// `moreQueued` says, once the read is handled, whether events are
    /// waiting already (the kernel's queue, or a rename's half held back):
    /// then the names this read could not settle by its events are checked
    /// after a later read (``settleNames()``). Programs go on changing the
    /// folder while a read is handled; a look at the disk now would run
    /// ahead of the events still queued, which would then be taken for news.
    ///
    /// `held` are the events the rename pairing holds back after `events`
    /// (from a `movedFrom` whose partner may still come): the items they
    /// rename away are looked for where this read finds items arriving.
    mutating func handle(
        _ events: [SourceEvent], at time: Timestamp, held: [SourceEvent] = [], moreQueued: () -> Bool = { false }
    ) {
        now = time
        guard !isRootRemoved else { return }
        laterEventsQueued = moreQueued()
        defer { laterEventsQueued = false }
        var movedTo: [UInt32: Int] = [:]
        var movedFromCookies = Set<UInt32>()
        // Where each name was last renamed away in this read.
        var lastDeparture: [DepartureKey: Int] = [:]
        for (position, event) in events.enumerated() {
            switch event.kind {
            case .movedTo(let cookie): movedTo[cookie] = position
            case .movedFrom(let cookie):
                movedFromCookies.insert(cookie)
                if let name = event.name { lastDeparture[DepartureKey(event.watch, name)] = position }
            default: break
            }
        }
        // The arrivals whose departure this read does not have (from
        // outside, or from a folder not watched yet), in order.
        let loneArrivals = events.indices.filter { position in
            if case .movedTo(let cookie) = events[position].kind { !movedFromCookies.contains(cookie) } else { false }
        }
        // Where the kernel last dropped events in this read: the rescan from
        // the root it calls for settles every item by identity.
        let lastOverflow = events.lastIndex { if case .overflow = $0.kind { true } else { false } }
        // Items renamed away to a folder not watched yet and from there to
        // a lone arrival later in this read: by that arrival's position.
        var landings: [Int: InFlight] = [:]
        /// Whether a rename later in this read takes `event`'s name away.
        func leavesLater(_ event: SourceEvent, at position: Int) -> Bool {
            guard let name = event.name, let departure = lastDeparture[DepartureKey(event.watch, name)] else {
                return false
            }
            return departure > position
        }
        var consumed = Set<Int>()
        let heldArrivals = Set(
            held.compactMap { event -> UInt32? in if case .movedTo(let cookie) = event.kind { cookie } else { nil } })
        readPosition = 0
        departures = (events + held).enumerated().compactMap { position, event in
            guard case .movedFrom(let cookie) = event.kind, movedTo[cookie] == nil, !heldArrivals.contains(cookie),
                let name = event.name
            else { return nil }
            return (event.watch, name, position)
        }
        defer {
            // An arrival not handled after all (its folder went meanwhile):
            // the item left, as its own event said.
            for flight in landings.values where tree.isLive(flight.index) { forgetSubtree(flight.index) }
            departures.removeAll()
            if !moreQueued() || unsettledReads >= Self.longestUnsettled {
                settleNames()
            } else if !movedOnto.isEmpty || !displaced.isEmpty {
                unsettledReads += 1
            }
        }
        for (position, event) in events.enumerated() where !consumed.contains(position) {
            if isRootRemoved { return }
            readPosition = position
            switch event.kind {
            case .overflow:
                rescan(from: Tree.rootIndex, reason: "overflow")
                continue
            case .watchRemoved:
                if let index = watchedDirectories.removeValue(forKey: event.watch) {
                    watchOfDirectory[index] = nil
                    if index == Tree.rootIndex { rootGone() }
                }
                continue
            case .selfDeleted, .selfMoved, .unmounted:
                if watchedDirectories[event.watch] == Tree.rootIndex { rootGone() }
                continue
            case .rescan:
                if let directory = watchedDirectories[event.watch] { rescan(from: directory, reason: nil) }
                continue
            default:
                break
            }
            guard let directory = watchedDirectories[event.watch], tree.isLive(directory),
                let name = event.name
            else { continue }
            switch event.kind {
            case .movedFrom(let cookie):
                if let target = movedTo[cookie], target > position,
                    let destination = watchedDirectories[events[target].watch], tree.isLive(destination),
                    let newName = events[target].name
                {
                    consumed.insert(target)
                    handleMove(
                        from: directory, name: name, to: destination, newName: newName,
                        exchanged: Self.isExchange(events, at: target))
                } else if let lastOverflow, lastOverflow > position {
                    // A rename whose second half the kernel may have dropped:
                    // the item may be anywhere in the tree. Taken for a move
                    // out, it would be removed, and found again by the
                    // rescan as a new item, with new ids for everything in it.
                    continue
                } else if let known = tree.child(of: directory, named: name),
                    let target = landing(
                        of: known, after: position, among: loneArrivals, events: events, taken: landings)
                {
                    landings[target] = takeOff(known, position: position)
                } else {
                    look(at: name, in: directory, cause: .movedOut)
                }
            case .movedTo:
                if let flight = landings.removeValue(forKey: position) {
                    land(flight, in: directory, name: name)
                } else {
                    look(
                        at: name, in: directory, cause: Self.isExchange(events, at: position) ? .exchangedIn : .movedIn)
                }
            case .created:
                look(at: name, in: directory, cause: .created, subjectIsDirectory: event.isDirectory)
            case .deleted:
                look(at: name, in: directory, cause: .deleted)
            case .modified:
                look(
                    at: name, in: directory, cause: .written, subjectIsDirectory: event.isDirectory,
                    leavesLater: leavesLater(event, at: position))
            case .closedWrite:
                look(
                    at: name, in: directory, cause: .closedWrite, subjectIsDirectory: event.isDirectory,
                    leavesLater: leavesLater(event, at: position))
            case .attributes:
                look(
                    at: name, in: directory, cause: .attributes, subjectIsDirectory: event.isDirectory,
                    leavesLater: leavesLater(event, at: position))
            default:
                break
            }
        }
    }

    /// Waits for the renames whose first half is among `events` without
    /// the second (``MovePairing``), so that what they queued can be read
    /// before a lone half is taken for a move out of the tree. A directory
    /// that is no longer where the tree has it is not waited for: its
    /// renames get the pairing's fixed wait alone.
    func awaitRenames(reported events: [SourceEvent]) {
        var directories: Set<Tree.Index> = []
        for position in MovePairing.unpairedMovesFrom(events) {
            if let directory = watchedDirectories[events[position].watch], tree.isLive(directory) {
                directories.insert(directory)
            }
        }
        for directory in directories {
            _ = fileSystem.awaitRenames(inDirectory: tree.path(of: directory), identity: tree.identity(of: directory))
        }
    }

    /// An item between the two renames that took it through a folder not
    /// watched yet: the kernel reported it leaving its name, and arriving
    /// at another name later in the same read, with no cookie to pair the
    /// two. It is reported removed when it leaves, as a consumer must see
    /// its name free before another item takes it (a swap or a rotation of
    /// names through that folder), and added again where it lands, with its
    /// id and its items' ids. In between it waits in its folder under a name
    /// no file can have (``Tree/isInFlight(_:)``), invisible to queries and
    /// to the events in between.
    struct InFlight {
        var index: Tree.Index
    }

    /// The lone arrival after `position` at which the disk now has
    /// `known`, an item that a lone rename at `position` took from its name:
    /// the same identity and kind at that arrival's name, and no longer at
    /// its own.
    func landing(
        of known: Tree.Index, after position: Int, among arrivals: [Int], events: [SourceEvent],
        taken: [Int: InFlight]
    ) -> Int? {
        let identity = tree.identity(of: known)
        if case .success(let here) = fileSystem.metadata(at: tree.path(of: known)), here.identity == identity {
            return nil
        }
        for target in arrivals where target > position && taken[target] == nil {
            guard let destination = watchedDirectories[events[target].watch], tree.isLive(destination),
                let name = events[target].name, !tree.isSame(destination, asOrUnder: known)
            else { continue }
            let path = tree.path(of: destination)
            guard filter.includes(name, in: path) else { continue }
            if case .success(let there) = fileSystem.metadata(at: path.appending(name)),
                there.identity == identity, there.kind == tree[known].kind
            {
                return target
            }
        }
        return nil
    }

    /// Reports `index` removed from its name and holds it until it lands (``InFlight``).
    mutating func takeOff(_ index: Tree.Index, position: Int) -> InFlight {
        reportRemoved(index)
        tree.move(index, to: tree[index].parent, name: Tree.inFlightName(position))
        return InFlight(index: index)
    }

    /// Puts an item in flight at the name of its arrival, as a rename does,
    /// and reports it and its items added there, with their ids.
    mutating func land(_ flight: InFlight, in destination: Tree.Index, name: [UInt8]) {
        let index = flight.index
        guard tree.isLive(index) else { return }
        let (metadata, savedOver) = makeRoom(
            for: index, at: tree.path(of: destination).appending(name), in: destination, name: name)
        if let savedOver {
            // Reported removed when it left: only the saved file is reported.
            forgetSubtree(index)
            replace(savedOver, with: metadata, replacedBy: nil)
            return
        }
        tree.move(index, to: destination, name: name)
        tree.set(index, metadata: metadata)
        var items: [Tree.Index] = []
        tree.walk(from: index) { items.append($0) }
        for item in items where !tree.has(item, flag: Tree.Flag.unreported) { emit(.added(changedItem(item))) }
    }

    /// Whether the `movedTo` at `position` is the first half of an
    /// exchange: the same directory's item of that name leaves by a rename
    /// among the next few events (the kernel reports the second rename
    /// right after the first, with at most the moved folder's own
    /// `selfMoved` between them).
    static func isExchange(_ events: [SourceEvent], at position: Int) -> Bool {
        ((position + 1)..<min(events.count, position + 1 + SourceEvent.exchangeWindow)).contains {
            SourceEvent.isExchangePair(arrival: events[position], departure: events[$0], distance: $0 - position)
        }
    }

    mutating func rootGone() {
        guard !isRootRemoved else { return }
        isRootRemoved = true
        emit(.rootRemoved(root: rootDescription))
    }

    /// A rename inside the watched tree, both ends known. The kernel's word
    /// is taken for it (the disk may have moved on since, and the events that
    /// follow will say how); only the metadata is refreshed when the disk
    /// still shows the same item there.
    mutating func handleMove(
        from directory: Tree.Index, name: [UInt8], to destination: Tree.Index, newName: [UInt8], exchanged: Bool
    ) {
        let destinationPath = tree.path(of: destination)
        let visibleAfter = filter.includes(newName, in: destinationPath)
        guard let source = tree.child(of: directory, named: name) else {
            // From a hidden, excluded or unknown name: an arrival.
            if visibleAfter { look(at: newName, in: destination, cause: exchanged ? .exchangedIn : .movedIn) }
            return
        }
        guard visibleAfter else {
            // To a hidden or excluded name: a departure.
            remove(source)
            return
        }
        if let occupant = tree.child(of: destination, named: newName), occupant != source,
            case .success(let there) = fileSystem.metadata(at: destinationPath.appending(newName)),
            there.identity == tree.identity(of: occupant), there.kind == tree[occupant].kind,
            there.identity != tree.identity(of: source)
        {
            // The tree already has at the new name what the disk has there:
            // a rescan (or a look) read the disk after this rename and
            // after renames still queued behind it, while the program went
            // on renaming during the read. The rename is old news for the
            // new name; taken again, it would put the item the tree now
            // has at the old name (another one, by those renames) over the
            // right one. The old name is checked once the read is handled.
            movedOnto.append((directory, name))
            return
        }
        guard !tree.isSame(destination, asOrUnder: source) else {
            // Impossible on a real file system; settle both names by the disk.
            look(at: name, in: directory, cause: .movedOut)
            look(at: newName, in: destination, cause: .movedIn)
            return
        }
        let (metadata, savedOver) = makeRoom(
            for: source, at: destinationPath.appending(newName), in: destination, name: newName)
        if let savedOver {
            replace(savedOver, with: metadata, replacedBy: source)
            return
        }
        move(source, to: destination, name: newName)
        tree.set(source, metadata: metadata)
    }

    /// Makes room for `source`, renamed to `name` in `destination` (at
    /// `path`), and says with what metadata it lands: the disk's when the
    /// disk shows it there. Otherwise the disk has moved on since, or the
    /// tree's item at the old name was not the one renamed (a name reused
    /// within one read, looked at after it changed hands): the tree's, and
    /// the name is checked once the read is handled. A file at the name
    /// when `source` is a file is returned, for the caller to replace (an
    /// atomic save: it keeps its id); any other item at the name is removed.
    mutating func makeRoom(
        for source: Tree.Index, at path: ItemPath, in destination: Tree.Index, name: [UInt8]
    ) -> (metadata: FileMetadata, savedOver: Tree.Index?) {
        var metadata = tree.metadata(of: source)
        if case .success(let onDisk) = fileSystem.metadata(at: path), onDisk.identity == metadata.identity {
            metadata = onDisk
        } else {
            movedOnto.append((destination, name))
        }
        if let occupant = tree.child(of: destination, named: name), occupant != source {
            if tree[occupant].kind != .directory && metadata.kind != .directory { return (metadata, occupant) }
            remove(occupant)
        }
        return (metadata, nil)
    }

    /// A rename onto an existing file (an atomic save): the destination keeps
    /// its id and is reported `modified`; the source, if it was reported, is
    /// reported `removed`.
    mutating func replace(_ occupant: Tree.Index, with metadata: FileMetadata, replacedBy source: Tree.Index?) {
        if let source { remove(source) }
        tree.set(occupant, metadata: metadata)
        if tree.has(occupant, flag: Tree.Flag.unreported) {
            // Not reported yet: it will be, once this content has settled.
            writes.activity(
                on: occupant, at: now.monotonic, closed: true, size: metadata.size, modified: metadata.modified)
            return
        }
        writes.forget(occupant)
        tree.set(occupant, flag: Tree.Flag.writing, false)
        emit(.modified(changedItem(occupant)))
    }

    /// Settles one directory entry by comparing the tree with the disk.
    /// `subjectIsDirectory`: whether the kernel said the event's subject was
    /// a folder (given for events that create or keep names).
    /// `leavesLater`: whether a rename later in the same read takes the name
    /// away (given for events that keep names).
    mutating func look(
        at name: [UInt8], in directory: Tree.Index, cause: Cause, subjectIsDirectory: Bool? = nil,
        leavesLater: Bool = false
    ) {
        let directoryPath = tree.path(of: directory)
        guard filter.includes(name, in: directoryPath) else { return }
        guard isInPlace(directory, at: directoryPath) else {
            // The folder was moved by a rename still ahead in the queue: its
            // path in the tree leads elsewhere on disk. Look again once the
            // queue is read.
            displaced.insert(directory)
            return
        }
        let path = directoryPath.appending(name)
        let known = tree.child(of: directory, named: name)
        let onDisk: FileMetadata?
        switch fileSystem.metadata(at: path) {
        case .success(let metadata): onDisk = metadata
        case .failure(.notFound), .failure(.notDirectory): onDisk = nil
        case .failure(let errno):
            emit(.error(message: "cannot read '\(path)': \(errno)", path: path))
            return
        }
        if let subjectIsDirectory, let onDisk, (onDisk.kind == .directory) != subjectIsDirectory {
            // What the event was about (made, written, its attributes set)
            // is gone from its name, and a folder has the name where it was
            // a file (or the reverse): a delete or renames later in the
            // queue did that (a rename never puts a folder over a file),
            // and their events settle both. Taken now for an arrival, a
            // folder the tree holds elsewhere would be added anew and its
            // items claimed out of it.
            return
        }
        switch (known, onDisk) {
        case (nil, nil):
            return
        case (let known?, nil) where cause.keepsNames:
            // Written (or its attributes set), and gone from its name by the
            // time we look: the event that took it away (a delete or a
            // rename, in this read or the next) says where it went, and
            // a rename keeps its id. Removing it here would report a file
            // written and moved at once as removed and added anew. The
            // write is counted now, on the item as the tree knows it.
            if tree[known].kind == .file && cause != .attributes {
                beginWriting(known, metadata: tree.metadata(of: known), closed: cause == .closedWrite)
            }
        case (let known?, nil):
            remove(known)
        case (nil, let metadata?):
            if movedIn(metadata, at: path, into: directory) != nil {
                // An item the tree holds elsewhere (gone from there) is at
                // the name of one just made, moved in, written or renamed
                // away: renames later in the queue put it here (the other
                // item renamed away and this one onto its name, as a swap
                // or rotation of names does), and their events settle both.
                // Taken now for a new item, a folder's items would be
                // claimed out of the tree's folder, which the renames then
                // move here without them (CI's "content missed" runs), or
                // the folder would be in the tree twice, its watch lost
                // with the copy. Checked once the read is handled: a name
                // the queue did not settle is rescanned.
                movedOnto.append((directory, name))
                return
            }
            arrive(name, in: directory, metadata: metadata, cause: cause)
        case (let known?, let metadata?):
            if metadata.identity == tree.identity(of: known) && metadata.kind == tree[known].kind {
                update(known, with: metadata, cause: cause)
            } else if cause.keepsNames && (leavesLater || laterEventsQueued) {
                // Written (or its attributes set), and another item at its
                // name by the time we look: a rename later in this read
                // takes the name away, and it and the renames after it say
                // where each item went (a swap or a rotation of names).
                // Taken now for the same file written anew, the item would
                // take the newcomer's identity, and the renames would carry
                // it to the wrong name and give its own inode a new id. The
                // write is counted on the item as the tree knows it. (So
                // too when events are queued behind this read: renames the
                // read did not reach may have done it. The name is checked
                // once the queue is read.)
                if tree[known].kind == .file && cause != .attributes {
                    beginWriting(known, metadata: tree.metadata(of: known), closed: cause == .closedWrite)
                }
                if !leavesLater { movedOnto.append((directory, name)) }
            } else if cause.isArrival && metadata.kind != .directory && tree[known].kind != .directory {
                if movedIn(metadata, at: path, into: directory) != nil {
                    // The disk has another file at the name by now, one the
                    // tree holds elsewhere (gone from there): renames later
                    // in the queue brought it (a swap or a rotation of names
                    // right after the save), and their events settle both.
                    // Taken for the saved file, it would take the document's
                    // id, and lose its own. Checked once the read is handled.
                    movedOnto.append((directory, name))
                    return
                }
                // Renamed over from outside or from a hidden name: an atomic save.
                replace(known, with: metadata, replacedBy: nil)
            } else if cause == .exchangedIn && metadata.kind == .directory && tree[known].kind == .directory {
                // A folder exchanged for this one from outside or from a
                // hidden name (a package's atomic save), this one leaving
                // by the same rename: the same folder saved anew. (A folder
                // merely moved in where the tree still has one is not: the
                // tree's may be on its way elsewhere, by renames not read yet.)
                renewFolder(known, with: metadata)
            } else if cause.keepsNames && (metadata.kind == .directory || tree[known].kind == .directory) {
                // Another item at a folder's name (or a folder at an item's),
                // seen through an event that changes no name: renames not
                // read yet put it there (a swap or a rotation of names), and
                // their events settle it. Taken now for a removal and an
                // arrival, the folder's items would be moved into the
                // newcomer and lost with it when those renames are read.
                return
            } else if cause != .created && cause != .deleted && cause != .movedOut && metadata.kind == .file
                && tree[known].kind == .file
            {
                // Another inode under the same name with no create or delete
                // seen for it: the same document, written anew. (Not when the
                // event says the name's item was renamed away: the item left,
                // to a folder not watched yet or out of the tree, and the one
                // at its name is another, whose own event follows. Taken for
                // the same document, it would keep the id while the item,
                // found later where it went, got a new one.)
                replace(known, with: metadata, replacedBy: nil)
                beginWriting(known, metadata: metadata, closed: cause == .closedWrite)
            } else {
                remove(known)
                if cause == .movedOut {
                    // The item at the name left by a rename, and another
                    // took the name since: that one's own event (a rename
                    // onto the name, a creation) comes later in the queue
                    // and settles it. Taken now for a new item, a folder
                    // renamed there would have its items claimed into the
                    // copy, and lost with it when the rename is read.
                    return
                }
                if cause == .created || cause.isArrival, movedIn(metadata, at: path, into: directory) != nil {
                    // As at a free name (above): the tree holds the newcomer
                    // elsewhere, and renames later in the queue bring it here.
                    // Added now, a folder would be in the tree twice, under
                    // one watch, and removing the copy would end the watch.
                    movedOnto.append((directory, name))
                    return
                }
                arrive(name, in: directory, metadata: metadata, cause: cause)
            }
        }
    }

    /// A new item under `directory`.
    mutating func arrive(_ name: [UInt8], in directory: Tree.Index, metadata: FileMetadata, cause: Cause) {
        // Something moved in arrives complete; something created is being written.
        let writing = metadata.kind == .file && !cause.isArrival
        let index = add(name: name, in: directory, metadata: metadata, writing: writing)
        if writing && cause == .closedWrite { writes.closed(index, at: now.monotonic) }
        if metadata.kind == .directory { populate(index, report: true, fresh: true, complete: cause.isArrival) }
    }

    /// A known item that may have changed.
    mutating func update(_ index: Tree.Index, with metadata: FileMetadata, cause: Cause) {
        if cause == .attributes || cause == .closedWrite { keepIdentityAttribute(of: index) }
        guard metadata.kind == .file else {
            tree.set(index, metadata: metadata)
            return
        }
        let old = tree.metadata(of: index)
        let changed = !old.hasSameContentStamp(as: metadata)
        tree.set(index, metadata: metadata)
        switch cause {
        case .written, .closedWrite:
            if changed || cause == .written || writes.isTracking(index) {
                beginWriting(
                    index, metadata: metadata, closed: cause == .closedWrite, report: changed || cause == .written)
            }
        case .attributes, .created, .movedIn, .exchangedIn:
            if changed {
                if writes.isTracking(index) {
                    writes.activity(
                        on: index, at: now.monotonic, closed: writes.state(of: index)!.closed,
                        size: metadata.size, modified: metadata.modified)
                } else {
                    // A time or size set without writing (touch, truncate by path).
                    emit(.modified(changedItem(index)))
                }
            }
        case .deleted, .movedOut:
            break
        }
    }

    /// Puts the item's id back in its identity attribute when a copy tool
    /// wrote another item's there (`cp -a` copies attributes last).
    mutating func keepIdentityAttribute(of index: Tree.Index) {
        // A file not reported yet keeps what a copy tool wrote until it is
        // reported: that is how a copy is recognized.
        guard options.storesIdentityAttribute, !tree.has(index, flag: Tree.Flag.unreported) else { return }
        let path = tree.path(of: index)
        let id = tree.id(of: index)
        if fileSystem.identityAttribute(at: path) != id { fileSystem.setIdentityAttribute(id, at: path) }
    }

    /// Marks a file as being written and reports `modified` with
    /// `"writing": true` (the coalescer folds the writes of one latency
    /// window into one); `finished` follows once the writer is done.
    mutating func beginWriting(_ index: Tree.Index, metadata: FileMetadata, closed: Bool, report: Bool = true) {
        tree.set(index, flag: Tree.Flag.writing, true)
        writes.activity(on: index, at: now.monotonic, closed: closed, size: metadata.size, modified: metadata.modified)
        if report && !tree.has(index, flag: Tree.Flag.unreported) { emit(.modified(changedItem(index))) }
    }
}

extension ObserverCore {
    /// Whether the disk still has this directory at the path the tree gives it.
    func isInPlace(_ directory: Tree.Index, at path: ItemPath) -> Bool {
        if directory == Tree.rootIndex { return true }
        guard case .success(let metadata) = fileSystem.metadata(at: path) else { return false }
        return metadata.identity == tree.identity(of: directory)
    }

    /// How many reads in a row may leave names unsettled while more events
    /// are queued (a folder that never stops changing is still settled).
    static var longestUnsettled: Int { 8 }

    /// Checks the names the reads since the last check could not settle by
    /// their events (``movedOnto``, ``displaced``), by the disk.
    mutating func settleNames() {
        unsettledReads = 0
        settleMovedOnto()
        rescanDisplaced()
    }

    /// Checks the names a rename put an item at while the disk showed
    /// another item there. Events later in the read that changed the name
    /// have settled it by now; if the tree still holds another item than
    /// the disk at such a name, the item it moved was not the one renamed
    /// (its name was reused within the read and looked at after it changed
    /// hands), and no event to come will say so: the folder is rescanned,
    /// which pairs its items with the disk's by identity.
    mutating func settleMovedOnto() {
        guard !movedOnto.isEmpty else { return }
        let names = movedOnto
        movedOnto.removeAll()
        var folders: Set<Tree.Index> = []
        for (directory, name) in names where tree.isLive(directory) && !folders.contains(directory) {
            let path = tree.path(of: directory)
            guard isInPlace(directory, at: path) else { continue }  // rescanDisplaced settles it
            let known = tree.child(of: directory, named: name)
            let onDisk: FileMetadata?
            switch fileSystem.metadata(at: path.appending(name)) {
            case .success(let metadata): onDisk = filter.includes(name, in: path) ? metadata : nil
            case .failure: onDisk = nil
            }
            switch (known, onDisk) {
            case (nil, nil):
                continue
            case (let known?, let metadata?)
            where tree.identity(of: known) == metadata.identity && tree[known].kind == metadata.kind:
                continue
            default:
                folders.insert(directory)
            }
        }
        // Outermost first; a folder inside one already rescanned needs nothing more.
        var done: [Tree.Index] = []
        for (_, folder) in folders.map({ (tree.path(of: $0).bytes.count, $0) }).sorted(by: { $0 < $1 })
        where tree.isLive(folder) && !done.contains(where: { tree.isSame(folder, asOrUnder: $0) }) {
            rescan(from: folder, reason: nil)
            done.append(folder)
        }
    }

    /// Rescans the folders whose events could not be settled by path, once
    /// the tree has them where the disk has them. A folder whose rename is
    /// not read yet stays for the next round; one that is gone is dropped.
    mutating func rescanDisplaced() {
        guard !displaced.isEmpty else { return }
        let folders = displaced.filter { tree.isLive($0) }
        displaced.removeAll()
        // Outermost first; a folder inside one already rescanned needs nothing more.
        var done: [Tree.Index] = []
        let ordered = folders.map { (tree.path(of: $0).bytes.count, $0) }.sorted(by: { $0 < $1 })
        for (_, folder) in ordered where tree.isLive(folder) {
            if done.contains(where: { tree.isSame(folder, asOrUnder: $0) }) { continue }
            if isInPlace(folder, at: tree.path(of: folder)) {
                rescan(from: folder, reason: nil)
                done.append(folder)
            } else {
                displaced.insert(folder)
            }
        }
    }
}

extension SourceEvent {
    /// How many events after an exchange's arrival its departure may come.
    static let exchangeWindow = 3

    /// Whether `departure` is the second half of the exchange whose first
    /// half is `arrival`, `distance` events before it: a `movedTo`, then a
    /// `movedFrom` of the same directory and name within ``exchangeWindow``.
    /// ``MovePairing`` keeps such a pair in one read by the same rule.
    static func isExchangePair(arrival: SourceEvent, departure: SourceEvent, distance: Int) -> Bool {
        guard case .movedTo = arrival.kind, case .movedFrom = departure.kind else { return false }
        return (1...exchangeWindow).contains(distance) && departure.watch == arrival.watch
            && departure.name == arrival.name
    }
}

/// A name in a watched folder, as the events of one read give it.
struct DepartureKey: Hashable {
    var watch: Int32
    var name: [UInt8]

    init(_ watch: Int32, _ name: [UInt8]) {
        self.watch = watch
        self.name = name
    }
}
