"""The Lua scripts of the Redis store: each mutation is one script, so it is atomic across
every server process and costs one round trip (EVALSHA).

Every script touches only the keys it is given, all of one hash tag (one game's ``{id}``, or
one claim's ``{req:…}``), so in a cluster each runs on the primary of one slot. The key
layout is described in ``accordion.store.redis``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Script:
    """A script's text and the SHA1 that EVALSHA names it by."""

    text: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.text.encode()).hexdigest())


# KEYS: g e r r0. ARGV: expected, data, ttl_ms, event, request_id, fingerprint, reply, maxlen,
# keep, touch, trim ('~': about maxlen, in whole stream nodes, for long logs; '=': exactly, for
# short), watched_only ('1': append the event only if the stream exists, i.e. someone watches).
# Returns {'nf'} | {'dup', fingerprint, reply} | {'conflict', current} | {'ok', version}.
# touch = '1' (only when WAIT is on): a replayed reply rewrites g's TTL to what it is, a no-op
# write whose only effect is that the WAIT after it covers the original write too.
# A record is one field: <request id> = <fingerprint length (1 byte)><fingerprint><reply>.
CAS = Script("""
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {'nf'} end
local rid = ARGV[5]
if rid ~= '' then
  for i = 3, 4 do
    local rec = redis.call('HGET', KEYS[i], rid)
    if rec then
      if ARGV[10] == '1' then
        local t = redis.call('PTTL', KEYS[1])
        if t > 0 then redis.call('PEXPIRE', KEYS[1], t) end
      end
      local n = string.byte(rec, 1)
      return {'dup', string.sub(rec, 2, n + 1), string.sub(rec, n + 2)}
    end
  end
end
if tonumber(cur) ~= tonumber(ARGV[1]) then return {'conflict', cur} end
local v = tostring(tonumber(cur) + 1)
redis.call('HSET', KEYS[1], 'v', v, 'd', ARGV[2])
if ARGV[12] ~= '1' or redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[11], ARGV[8], v .. '-0', 'p', ARGV[4])
end
if rid ~= '' then
  if redis.call('HLEN', KEYS[3]) >= tonumber(ARGV[9]) then
    redis.call('RENAME', KEYS[3], KEYS[4])
  end
  redis.call('HSET', KEYS[3], rid, string.char(#ARGV[6]) .. ARGV[6] .. ARGV[7])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return {'ok', v}
""")

# KEYS: g. ARGV: credential (a presented token's hash). The game's {v, t, d} if its token hash
# holds the credential (``credentials.holds``: a 32-byte hash alone is the play hash; else byte
# 0x01, the play hash, the watch hash, …), else nil: for a wrong credential exactly what an
# unknown id gets, after the same work (an absent game is compared against a record of zeros,
# ``credentials.NO_ACCESS``), so neither Redis's answer nor this process's work on it tells that
# the game exists (issue 28). The strings are compared as SHA-1s of each (the double-hash
# compare): what Lua's compare reads is then unrelated to the stored hashes, as with
# hmac.compare_digest. Both compares always run. The game's data is read only for a credential
# that opens it (a wrong one must not cost Redis the copy of a record an unknown id does not have).
LOAD = Script("""
local r = redis.call('HMGET', KEYS[1], 'v', 't')
local t = r[2] or ('\\1' .. string.rep('\\0', 64))
local play, watch = '', ''
if #t == 32 then
  play = t
elseif string.byte(t, 1) == 1 then
  play, watch = string.sub(t, 2, 33), string.sub(t, 34, 65)
end
local c = redis.sha1hex(ARGV[1])
local p, w = redis.sha1hex(play), redis.sha1hex(watch)
local held = #ARGV[1] == 32 and (p == c or w == c)
if r[1] and held then return {r[1], t, redis.call('HGET', KEYS[1], 'd')} end
return false
""")

# KEYS: g e. The stream of a game nobody watched yet (watched_only): made, empty, at the game's
# version (so the next event's id follows), with the game's TTL. Returns the version, or nil.
OPEN_STREAM = Script("""
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return false end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '0', v .. '-0', 'p', '')
  local t = redis.call('PTTL', KEYS[1])
  if t > 0 then redis.call('PEXPIRE', KEYS[2], t) end
end
return v
""")

# KEYS: g e r r0. ARGV: version, token_hash, data, ttl_ms. Leftover e/r/r0 of an earlier
# game with this id are dropped so the new game inherits no events or replies.
CREATE = Script("""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
""")

# KEYS: g. ARGV: expected token hash, new token hash. Replaces the game's token hash (its
# access record) if it is the expected one; version, data and TTL stay.
# Returns {'nf'} | {'conflict'} | {'ok'}.
SET_TOKEN_HASH = Script("""
local t = redis.call('HGET', KEYS[1], 't')
if not t then return {'nf'} end
if t ~= ARGV[1] then return {'conflict'} end
redis.call('HSET', KEYS[1], 't', ARGV[2])
return {'ok'}
""")

# KEYS: k. ARGV: value, ttl_ms. A named record (a deal code's), unless the name is taken.
# Returns 1 (stored) or 0. A script (not a plain SET) so that WAIT executors replicate it too.
PUT_NAMED = Script("""
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0
""")

# KEYS: r r0. ARGV: request_id. Returns {fingerprint, reply} or nil.
GET_REPLY = Script("""
for i = 1, 2 do
  local rec = redis.call('HGET', KEYS[i], ARGV[1])
  if rec then
    local n = string.byte(rec, 1)
    return {string.sub(rec, 2, n + 1), string.sub(rec, n + 2)}
  end
end
return false
""")

# KEYS: n. ARGV: fingerprint, reply, ttl_ms, touch. Returns the earlier {fingerprint, reply} or nil.
CLAIM = Script("""
local rec = redis.call('HMGET', KEYS[1], 'f', 'r')
if rec[1] then
  if ARGV[4] == '1' then
    local t = redis.call('PTTL', KEYS[1])
    if t > 0 then redis.call('PEXPIRE', KEYS[1], t) end
  end
  return rec
end
redis.call('HSET', KEYS[1], 'f', ARGV[1], 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
""")

# KEYS: any. Rewrites each existing key's TTL to its current value: a write that changes
# nothing, so that a WAIT after it on the same connection covers every earlier write.
TOUCH = Script("""
local n = 0
for i = 1, #KEYS do
  local t = redis.call('PTTL', KEYS[i])
  if t > 0 then redis.call('PEXPIRE', KEYS[i], t); n = n + 1 end
end
return n
""")

# KEYS: a pool's set. ARGV: cap, then the items. Adds items while the set holds fewer than
# cap (SADD: an item already there is not added twice); returns the set's size after.
POOL_ADD = Script("""
local n = redis.call('SCARD', KEYS[1])
local cap = tonumber(ARGV[1])
for i = 2, #ARGV do
  if n >= cap then break end
  n = n + redis.call('SADD', KEYS[1], ARGV[i])
end
return n
""")

# KEYS: a pool's set. Removes and returns a random member (nil: empty). A script, not a bare
# SPOP, so that with WAIT the pop is answered only once replicated, as every other write.
POOL_POP = Script("""
return redis.call('SPOP', KEYS[1])
""")
