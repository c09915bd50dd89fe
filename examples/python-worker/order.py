#!/usr/bin/env python3
"""The order workflow as durable steps (task type `order`, payload {"orderId", "items", "amount",
"failCharge"?: true}): reserve the stock, wait up to 30 minutes for the `payment` signal, charge the
card, ship, email. A payment that fails or never comes, a declined card, a failure on the last
attempt or a compensating cancel undoes what was done instead: refund the charge if there was one,
release the stock. A failed order then fails for good, saying why; a cancelled one ends cancelled.

The outside services are simulated: each effect appends one JSON line {"task", "effect",
"stepId"} to --effects FILE (printed without it). Like a real payment API they take the step id
as an idempotency key, because a step whose worker dies after the effect but before the journal
write runs again: the effect still happens once."""
import argparse, fcntl, hashlib, json

import durable


class Declined(Exception):
    """A permanent failure: retrying will not mend it, so the order is compensated at once."""


class World:
    """The shop's outside services, simulated; an effect already made under a step id is not made
    again, and answers the same reference."""
    def __init__(self, path=None):
        self.path, self.seen = path, set()

    def do(self, ctx, effect):
        step_id = ctx.step_id(effect)
        line = json.dumps({"task": ctx.task_id, "effect": effect, "stepId": step_id})
        if self.path is None:
            if step_id not in self.seen:
                self.seen.add(step_id)
                print(line, flush=True)
        else:
            with open(self.path, "a+") as f:
                fcntl.flock(f, fcntl.LOCK_EX)  # several workers may share one file
                f.seek(0)
                if not any(json.loads(made)["stepId"] == step_id for made in f if made.strip()):
                    f.write(line + "\n")
        return f"{effect}-{hashlib.sha1(step_id.encode()).hexdigest()[:10]}"


world = World()


def charge_card(ctx):
    if ctx.payload.get("failCharge"):
        raise Declined("card declined")
    return {"charge": world.do(ctx, "charge"), "amount": ctx.payload.get("amount")}


def fulfil(ctx):
    order = ctx.payload
    reservation = ctx.step("reserve", lambda: {"reservation": world.do(ctx, "reserve"), "items": order.get("items", [])})
    payment = ctx.wait_for_signal("payment", timeout_seconds=30 * 60)
    if payment is None:
        return compensate(ctx, "compensated", "no payment within 30 minutes")
    if not payment.get("paid"):
        return compensate(ctx, "compensated", f"payment failed: {payment.get('reason', 'unknown')}")
    try:
        charge = ctx.step("charge", lambda: charge_card(ctx))
    except Declined as e:
        return compensate(ctx, "compensated", str(e))
    shipment = ctx.step("ship", lambda: {"shipment": world.do(ctx, "ship")})
    email = ctx.step("email", lambda: {"email": world.do(ctx, "email")})
    return {"status": "shipped", "orderId": order["orderId"], "reservation": reservation, "payment": payment,
            "charge": charge, "shipment": shipment, "email": email}


def compensate(ctx, status, reason):
    """Undo in reverse order what the journal says was done; these steps are durable too, so an
    undo cut short by a crash resumes where it stopped."""
    undone = {}
    if "charge" in ctx.steps:
        undone["refund"] = ctx.step("refund", lambda: {"refund": world.do(ctx, "refund")})
    if "reserve" in ctx.steps:
        undone["release"] = ctx.step("release", lambda: {"release": world.do(ctx, "release")})
    if status != "cancelled":  # the order failed: said so, once its effects are undone
        raise durable.Permanent(f"{reason}; undone: {', '.join(undone) or 'nothing'}")
    return {"status": status, "orderId": ctx.payload["orderId"], "reason": reason, **undone}


def order(ctx):
    if ctx.cancelled:  # resumed by a compensating cancel: undo, do nothing new
        return compensate(ctx, "cancelled", "cancelled")
    try:
        return fulfil(ctx)
    except durable.Permanent:
        raise
    except Exception as e:
        if ctx.attempt < ctx.max_attempts:
            raise  # failed for now: the task is retried, and the steps done stay done
        return compensate(ctx, "compensated", f"{type(e).__name__}: {e}")


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--url", default="http://127.0.0.1:8080")
    args.add_argument("--queue", default="orders")
    args.add_argument("--worker", default="orders-1")
    args.add_argument("--effects", help="append the simulated effects to this file (default: print them)")
    args.add_argument("--exit-when-idle", action="store_true", help="stop after a claim that found nothing")
    opts = args.parse_args()
    world.path = opts.effects
    durable.run(opts.url, opts.queue, {"order": order}, opts.worker, exit_when_idle=opts.exit_when_idle)


if __name__ == "__main__":
    main()
