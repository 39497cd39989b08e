package serverbench.im

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import serverbench.Rt.ByteString

/** The im wire format (Proto): parsing, nick and channel rules, numerics, and cutting lines
  * at the 512-byte limit; the same cases as the Erlang server's sb_im_proto_tests. */
class ProtoTest {
  private val l = Limits("irc.serverbench", 512, 9, 50)

  @Test def parsesCommandsAndParameters(): Unit = {
    assertEquals(Some(Message("PRIVMSG", Vector("bob", "hello there"))), Proto.parse("privmsg bob :hello there"))
    assertEquals(Some(Message("NICK", Vector("al"))), Proto.parse(":al!a@h NICK al"))
    assertEquals(Some(Message("USER", Vector("a", "0", "*", "A B"))), Proto.parse("USER a 0 * :A B"))
    assertEquals(Some(Message("PRIVMSG", Vector("bob", ""))), Proto.parse("PRIVMSG bob :"))
    assertEquals(Some(Message(command = "", params = Vector())), Proto.parse("   "))
    assertEquals(None, Proto.parse(":prefix"))
    assertEquals(None, Proto.parse(":prefix   "))
    val m = Proto.parse("CMD " + (1 to 16).map(i => s"p$i").mkString(" ")).get
    assertEquals(15, m.params.size)
    assertEquals("p15 p16", m.params.last)
  }

  @Test def nicksAndChannels(): Unit = {
    Seq("c1z", "[a]-b", "abcdefghi").foreach(n => assertTrue(Proto.validNick(n, l), n))
    Seq("abcdefghij", "1abc", "-abc", "a b", "").foreach(n => assertFalse(Proto.validNick(n, l), n))
    assertTrue(Proto.validChannel("#c", l))
    Seq("#", "c", "#a,b", "#" + "x" * 50).foreach(c => assertFalse(Proto.validChannel(c, l), c))
    assertEquals("abc[]", Proto.fold("AbC[]"))
  }

  @Test def formatsNumericsAndRelayedLines(): Unit = {
    assertEquals(":irc.serverbench 001 al :Welcome\r\n", Proto.numeric(1, "al", Seq("Welcome"), l).utf8String)
    assertEquals(":irc.serverbench 421 * FOO :Unknown command\r\n",
      Proto.numeric(421, "*", Seq("FOO", "Unknown command"), l).utf8String)
    assertEquals(":a!u@127.0.0.1 JOIN #c\r\n", Proto.fromUser("a!u@127.0.0.1", "JOIN", Seq("#c"), None).utf8String)
  }

  @Test def cutsLinesAtTheLimit(): Unit = {
    val (items, rest, disc) = Proto.split(ByteString("A\r\nB\nC"), false, 512)
    assertEquals(Vector(Proto.Text("A"), Proto.Text("B")), items)
    assertEquals("C", rest.utf8String)
    assertFalse(disc)
    // 510 bytes + CRLF = 512 fits; 511 + CRLF does not
    assertEquals(Vector(Proto.Text("x" * 510)), Proto.split(ByteString("x" * 510 + "\r\n"), false, 512)._1)
    assertEquals(Vector(Proto.TooLong), Proto.split(ByteString("x" * 511 + "\r\n"), false, 512)._1)
    // still without its end but already too long: dropped as it comes, answered once at its end
    assertEquals((Vector(), ByteString.empty, true), Proto.split(ByteString("x" * 512), false, 512))
    assertEquals(Vector(Proto.TooLong, Proto.Text("NEXT")), Proto.split(ByteString("tail\r\nNEXT\r\n"), true, 512)._1)
  }
}
