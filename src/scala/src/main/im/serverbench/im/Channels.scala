package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import serverbench.Rt.{Actor, ActorRef, ByteString, Props}

/** The channels (docs/im.md): one actor per channel holding its members in joining order and
  * doing the fan-out. The Channels actor creates them and counts each one's members: every
  * JOIN, PART and a leaving client's goodbye pass through it on their way, so that a channel
  * whose last member leaves is stopped and forgotten with no JOIN in flight to it. A
  * channel PRIVMSG goes from the member's connection to the channel directly. `table`
  * (written by the Channels actor alone) tells connections whether a channel exists (403
  * against 442 / 404). Replies the asking client must see before its next lines (a JOIN's
  * echo and names, a PART's echo, the peers to relay a NICK or QUIT to) come back to it as
  * one message, which its connection actor waits for. */
object Channels {
  // tag: the asking connection's request, echoed in the answer (Conn.Replies)
  final case class Join(tag: Int, key: String, name: String, client: ActorRef, nick: String, prefix: String)
  final case class Part(tag: Int, key: String, client: ActorRef, line: ByteString)
  final case class Leave(tag: Int, key: String, client: ActorRef)

  def props(table: ConcurrentHashMap[String, ActorRef], c: Counters, limits: Limits): Props =
    Props(new Channels(table, c, limits))
}

final class Channels(table: ConcurrentHashMap[String, ActorRef], c: Counters, limits: Limits) extends Actor {
  import Channels._

  private val members = scala.collection.mutable.HashMap.empty[String, Int]

  def receive: Receive = {
    case Join(tag, k, name, client, nick, prefix) =>
      val ch = Option(table.get(k)).getOrElse {
        val ref = context.actorOf(Props(new Channel(k, name, c, limits)))
        table.put(k, ref)
        ref
      }
      members(k) = members.getOrElse(k, 0) + 1
      ch ! Channel.Join(tag, client, nick, prefix)
    case Part(tag, k, client, line) => leave(k, Channel.Part(tag, client, line))
    case Leave(tag, k, client) => leave(k, Channel.Leave(tag, client))
  }

  private def leave(k: String, msg: Any): Unit = Option(table.get(k)) match {
    case Some(ch) =>
      ch ! msg
      val n = members.getOrElse(k, 1) - 1
      if (n > 0) members(k) = n
      else {
        members.remove(k)
        table.remove(k, ch)
        ch ! Channel.Retire // after msg: the channel answers it first
      }
    case None => msg match { // a channel already gone: answer for it
        case Channel.Part(tag, client, line) => client ! Conn.Replies(tag, Vector(line), Nil)
        case Channel.Leave(tag, client) => client ! Conn.Replies(tag, Vector.empty, Nil)
        case _ => ()
      }
  }
}

object Channel {
  final case class Join(tag: Int, client: ActorRef, nick: String, prefix: String)
  final case class Part(tag: Int, client: ActorRef, line: ByteString)
  final case class Leave(tag: Int, client: ActorRef)
  final case class Msg(client: ActorRef, line: ByteString)
  /** The client's new nick (for the names list); it is answered with the other members. */
  final case class Renamed(tag: Int, client: ActorRef, nick: String)
  case object Retire
}

final class Channel(key: String, name: String, c: Counters, limits: Limits) extends Actor {
  import Channel._

  private val members = scala.collection.mutable.LinkedHashMap.empty[ActorRef, String] // client -> nick

  private def others(client: ActorRef): List[ActorRef] = members.keysIterator.filter(_ != client).toList

  def receive: Receive = {
    case Join(tag, client, nick, prefix) =>
      if (!members.contains(client)) {
        val line = Proto.fromUser(prefix, "JOIN", Seq(name), None)
        members(client) = nick
        others(client).foreach(_ ! Conn.Deliver(line))
        client ! Conn.Replies(tag, line +: names(nick), Nil, Some(key -> self))
      } else client ! Conn.Replies(tag, Vector.empty, Nil, Some(key -> self))
    case Part(tag, client, line) =>
      members.remove(client)
      members.keysIterator.foreach(_ ! Conn.Deliver(line))
      client ! Conn.Replies(tag, Vector(line), Nil)
    case Leave(tag, client) =>
      members.remove(client)
      client ! Conn.Replies(tag, Vector.empty, members.keysIterator.toList)
    case Msg(client, line) =>
      if (members.contains(client)) {
        val to = others(client)
        to.foreach(_ ! Conn.Deliver(line))
        c.channelDeliveries.add(to.size.toLong)
      }
    case Renamed(tag, client, nick) =>
      if (members.contains(client)) members(client) = nick
      client ! Conn.Replies(tag, Vector.empty, others(client))
    case Retire => context.stop(self)
  }

  /** 353 lines (split to fit a line) and 366, addressed to the joiner. */
  private def names(nick: String): Vector[ByteString] = {
    val room = limits.lineMaxBytes - (limits.serverName.length + nick.length + name.length + 16)
    val groups = Vector.newBuilder[String]
    val cur = new StringBuilder
    for (n <- members.valuesIterator) {
      if (cur.nonEmpty && cur.length + 1 + n.length > room) { groups += cur.toString; cur.clear() }
      if (cur.nonEmpty) cur.append(' ')
      cur.append(n)
    }
    if (cur.nonEmpty) groups += cur.toString
    groups.result().map(g => Proto.numeric(353, nick, Seq("=", name, g), limits)) :+
      Proto.numeric(366, nick, Seq(name, "End of NAMES list"), limits)
  }
}
