package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import serverbench.Rt.{ActorRef, ByteString, Props, Terminated}

/** The channels (docs/im.md): one actor per channel doing the fan-out of its PRIVMSGs, under
  * the Channels actor, which keeps every channel's membership (the registry; members in
  * joining order with their nicks) and answers JOIN, PART, NICK's and a leaving client's
  * requests itself. So a channel that chaos kills is succeeded by a fresh actor given the
  * membership back (its members are still connected), and what dies with the victim is only
  * its queued PRIVMSGs (counted), never a request a client waits for. All requests of a
  * client reach Channels in its order and are answered by this one actor, so a client sees
  * its replies in the order of its commands (JOIN #a,#b answers #a first). `table` (written
  * by Channels alone) gives connections each channel's Proc and tells them whether a
  * channel exists (403 against 442 / 404). Channels watches every member, so a connection
  * that ends without leaving (crashed, killed) leaves its channels and its QUIT is relayed. */
object Channels {
  // tag: the asking connection's request, echoed in the answer (Conn.Replies)
  final case class Join(tag: Int, key: String, name: String, client: Proc, nick: String, prefix: String)
  final case class Part(tag: Int, key: String, client: Proc, line: ByteString)
  /** Lines answered in turn with the other requests of the command (an error numeric). */
  final case class Echo(tag: Int, client: Proc, lines: Vector[ByteString])
  /** The client's new nick; answered with the peers of all its channels. */
  final case class Renamed(tag: Int, client: Proc, nick: String, prefix: String)
  /** Out of every channel; answered with the peers to relay the QUIT to. */
  final case class LeaveAll(tag: Int, client: Proc)

  final case class Member(nick: String, prefix: String)
  final class State(val name: String, val proc: Proc) {
    val members = scala.collection.mutable.LinkedHashMap.empty[Proc, Member]
  }

  def props(table: ConcurrentHashMap[String, Proc], c: Counters, limits: Limits, live: Chaos.Live): Props =
    Props(new Channels(table, c, limits, live))
}

final class Channels(table: ConcurrentHashMap[String, Proc], c: Counters, limits: Limits, live: Chaos.Live)
    extends serverbench.Rt.Actor {
  import Channels._

  private val chans = scala.collection.mutable.HashMap.empty[String, State]
  private val byClient = scala.collection.mutable.HashMap.empty[Proc, Set[String]]
  private val byRef = scala.collection.mutable.HashMap.empty[ActorRef, Proc]
  private val keyOf = scala.collection.mutable.HashMap.empty[Proc, String]

  private def spawn(p: Proc, members: Iterable[Proc]): Unit =
    p.start(i => context.actorOf(Props(new Channel(c, i, members))))

  def receive: Receive = {
    case Join(tag, k, name, client, nick, prefix) =>
      val st = chans.getOrElseUpdate(k, {
        val p = new Proc(Chaos.ChannelKind, c)
        spawn(p, Nil)
        table.put(k, p)
        live.procs.add(p)
        keyOf(p) = k
        new State(name, p)
      })
      if (!st.members.contains(client)) {
        val line = Proto.fromUser(prefix, "JOIN", Seq(st.name), None)
        st.members.keysIterator.foreach(_.tell(Conn.Deliver(line)))
        st.members(client) = Member(nick, prefix)
        st.proc.tell(Channel.Add(client))
        member(client, k)
        client.tell(Conn.Replies(tag, line +: names(st, nick), Nil))
      } else client.tell(Conn.Replies(tag, Vector.empty, Nil))
    case Part(tag, k, client, line) =>
      chans.get(k).filter(_.members.contains(client)).foreach { st =>
        st.members.keysIterator.filter(_ != client).foreach(_.tell(Conn.Deliver(line)))
        remove(k, st, client)
      }
      client.tell(Conn.Replies(tag, Vector(line), Nil))
    case Echo(tag, client, lines) => client.tell(Conn.Replies(tag, lines, Nil))
    case Renamed(tag, client, nick, prefix) =>
      val ks = byClient.getOrElse(client, Set.empty)
      ks.foreach(k => chans(k).members(client) = Member(nick, prefix))
      client.tell(Conn.Replies(tag, Vector.empty, peers(client, ks)))
    case LeaveAll(tag, client) => client.tell(Conn.Replies(tag, Vector.empty, leaveAll(client)))
    case Terminated(ref) => // a member ended without leaving (killed, crashed): leave for it
      byRef.remove(ref).foreach { client =>
        val prefix = byClient.getOrElse(client, Set.empty).headOption.flatMap(k => chans(k).members.get(client))
          .map(_.prefix)
        val to = leaveAll(client)
        prefix.foreach { p =>
          val line = Proto.fromUser(p, "QUIT", Nil, Some("Connection closed"))
          to.foreach(_.tell(Conn.Deliver(line)))
        }
      }
    case Chaos.Respawn(p, inc) => // a victim's successor, given the membership back
      keyOf.get(p).flatMap(chans.get).foreach { st =>
        inc.open(context.actorOf(Props(new Channel(c, inc, st.members.keys))))
        c.channelsRestarted.increment()
      }
  }

  private def member(client: Proc, k: String): Unit = {
    if (!byClient.contains(client)) { context.watch(client.cur.ref); byRef(client.cur.ref) = client }
    byClient(client) = byClient.getOrElse(client, Set.empty) + k
  }

  private def peers(client: Proc, ks: Set[String]): List[Proc] =
    ks.iterator.flatMap(k => chans(k).members.keysIterator).filter(_ != client).toSet.toList

  private def leaveAll(client: Proc): List[Proc] = {
    val ks = byClient.getOrElse(client, Set.empty)
    val to = peers(client, ks)
    ks.foreach(k => remove(k, chans(k), client))
    to
  }

  /** The client out of channel k; a channel left empty is stopped and forgotten. */
  private def remove(k: String, st: State, client: Proc): Unit = {
    st.members.remove(client)
    byClient.get(client).foreach(ks => if (ks.size > 1) byClient(client) = ks - k else byClient.remove(client))
    if (st.members.isEmpty) {
      chans.remove(k)
      table.remove(k, st.proc)
      live.procs.remove(st.proc)
      keyOf.remove(st.proc)
      Option(st.proc.cur.ref).foreach(context.stop) // none: chaos's successor, not yet made
    } else st.proc.tell(Channel.Remove(client))
  }

  /** 353 lines (split to fit a line) and 366, addressed to the joiner. */
  private def names(st: State, nick: String): Vector[ByteString] = {
    val room = limits.lineMaxBytes - (limits.serverName.length + nick.length + st.name.length + 16)
    val groups = Vector.newBuilder[String]
    val cur = new StringBuilder
    for (m <- st.members.valuesIterator; n = m.nick) {
      if (cur.nonEmpty && cur.length + 1 + n.length > room) { groups += cur.toString; cur.clear() }
      if (cur.nonEmpty) cur.append(' ')
      cur.append(n)
    }
    if (cur.nonEmpty) groups += cur.toString
    groups.result().map(g => Proto.numeric(353, nick, Seq("=", st.name, g), limits)) :+
      Proto.numeric(366, nick, Seq(st.name, "End of NAMES list"), limits)
  }
}

object Channel {
  final case class Add(client: Proc) extends Counted
  final case class Remove(client: Proc) extends Counted
  final case class Msg(client: Proc, line: ByteString) extends Counted
}

/** One channel's fan-out: its members (a copy kept in step by Channels) in joining order. */
final class Channel(c: Counters, protected val inc: Incarnation, initial: Iterable[Proc]) extends Tracked {
  import Channel._

  protected def counters: Counters = c
  private val members = scala.collection.mutable.LinkedHashSet.empty[Proc] ++= initial

  def receive: Receive = {
    case Msg(client, line) =>
      if (members.contains(client)) {
        var n = 0L
        members.foreach(m => if (m ne client) { m.tell(Conn.Deliver(line)); n += 1 })
        c.channelDeliveries.add(n)
      }
    case Add(client) => members += client
    case Remove(client) => members -= client
  }
}
