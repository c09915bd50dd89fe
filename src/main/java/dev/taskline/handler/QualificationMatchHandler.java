package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Scores how well a company's qualifications cover a project's requirements.
 *
 * <p>Payload:
 * <pre>{@code
 * {"company": {"name": "...", "qualifications": [{"name": "ISO 27001", "level": 3, "expires": "2027-05-01"}]},
 *  "project": {"name": "...", "requirements": [{"name": "ISO 27001", "minLevel": 2, "weight": 3, "mandatory": true}]},
 *  "asOf": "2026-11-29",
 *  "simulateMs": 0}
 * }</pre>
 *
 * <p>Expiry is judged only when {@code asOf} is given: a task may be retried days after it was
 * submitted, and judging against the wall clock would let two attempts of the same task disagree.
 * A qualification whose {@code expires} date is before {@code asOf} does not count; one expiring on
 * {@code asOf} still does.
 *
 * <p>When the company lists the same qualification more than once, the highest unexpired level is
 * used; only if every listing has expired is the requirement reported as {@code expired}.
 *
 * <p>{@code simulateMs} stands in for a slow model call: the handler waits that long on Vert.x
 * timers, reporting progress, so that progress reporting and lease handling can be exercised.
 */
public final class QualificationMatchHandler implements TaskHandler {

    public static final String TYPE = "qualification-match";

    static final int MAX_ENTRIES = 1000;
    static final int MAX_LEVEL = 10;
    static final int MAX_SIMULATE_MS = 600_000;
    static final int PROGRESS_STEPS = 10;

    // Every minLevel (1..10) divides 2520, so credit * 2520 is an integer and the score can be
    // computed as one exact division; rounding half up then never depends on floating-point noise.
    private static final BigDecimal CREDIT_SCALE = BigDecimal.valueOf(2520);
    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    public void validate(JsonObject payload) throws InvalidPayloadException {
        parse(payload);
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        Request request;
        try {
            // The payload was validated at submission, but it may have come back from the journal
            // written by an older version, so it is checked again.
            request = parse(context.payload());
        } catch (InvalidPayloadException e) {
            return Future.failedFuture(new IllegalArgumentException(e.getMessage(), e));
        }
        JsonObject result = score(request);
        int requirements = request.requirements.size();

        if (request.simulateMs == 0) {
            context.progress(100, "matched " + requirements + " requirements");
            return Future.succeededFuture(result);
        }

        // Short simulations get fewer steps so that no timer is asked for less than 1 ms.
        int steps = Math.min(PROGRESS_STEPS, request.simulateMs);
        Promise<JsonObject> promise = Promise.promise();
        scheduleStep(context, request.simulateMs, steps, 1, result, promise);
        return promise.future();
    }

    private static void scheduleStep(
            TaskContext context, int totalMs, int steps, int step, JsonObject result, Promise<JsonObject> promise) {
        // Delays are taken from absolute targets so that rounding does not add up over the steps.
        long delay = (long) totalMs * step / steps - (long) totalMs * (step - 1) / steps;
        context.vertx().setTimer(Math.max(1, delay), id -> {
            try {
                context.progress(step * 100 / steps, "matching " + step + "/" + steps);
                if (step == steps) {
                    promise.complete(result);
                } else {
                    scheduleStep(context, totalMs, steps, step + 1, result, promise);
                }
            } catch (RuntimeException e) {
                promise.tryFail(e);
            }
        });
    }

    // ---------------------------------------------------------------------------------------------
    // Pure logic, kept free of Vert.x so that it can be tested directly.

    /** Validates the payload and computes the match result. */
    static JsonObject score(JsonObject payload) throws InvalidPayloadException {
        return score(parse(payload));
    }

    static JsonObject score(Request request) {
        Map<String, Qualification> best = bestByName(request.qualifications, request.asOf);

        BigDecimal weightedCredit = BigDecimal.ZERO;
        BigDecimal totalWeight = BigDecimal.ZERO;
        boolean mandatoryMet = true;
        JsonArray breakdown = new JsonArray();

        for (Requirement req : request.requirements) {
            Qualification held = best.get(req.key);
            boolean expired = held != null && held.isExpired(request.asOf);
            String status;
            BigDecimal scaledCredit;
            if (held == null) {
                status = "missing";
                scaledCredit = BigDecimal.ZERO;
            } else if (expired) {
                status = "expired";
                scaledCredit = BigDecimal.ZERO;
            } else if (held.level >= req.minLevel) {
                status = "met";
                scaledCredit = CREDIT_SCALE;
            } else {
                // minLevel > level >= 0 here, so minLevel is at least 1 and divides 2520.
                status = "partial";
                scaledCredit = BigDecimal.valueOf((long) held.level * (2520 / req.minLevel));
            }
            boolean fullCredit = scaledCredit.compareTo(CREDIT_SCALE) == 0;
            if (req.mandatory && !fullCredit) {
                mandatoryMet = false;
            }
            weightedCredit = weightedCredit.add(req.weight.multiply(scaledCredit));
            totalWeight = totalWeight.add(req.weight);

            breakdown.add(new JsonObject()
                    .put("requirement", req.name)
                    .put("weight", req.weightAsGiven)
                    .put("mandatory", req.mandatory)
                    .put("required", req.minLevel)
                    .put("held", held == null ? null : held.level)
                    .put("expired", expired)
                    .put(
                            "credit",
                            scaledCredit
                                    .divide(CREDIT_SCALE, 3, RoundingMode.HALF_UP)
                                    .doubleValue())
                    .put("status", status));
        }

        int score;
        if (request.requirements.isEmpty()) {
            score = 100;
        } else {
            score = weightedCredit
                    .multiply(HUNDRED)
                    .divide(totalWeight.multiply(CREDIT_SCALE), 0, RoundingMode.HALF_UP)
                    .intValueExact();
        }

        return new JsonObject()
                .put("company", request.companyName)
                .put("project", request.projectName)
                .put("score", score)
                .put("mandatoryMet", mandatoryMet)
                .put("breakdown", breakdown);
    }

    /**
     * Per normalised name, the listing that gives the most credit: unexpired beats expired, then the
     * higher level wins, then the earlier listing, so that the choice is deterministic.
     */
    private static Map<String, Qualification> bestByName(List<Qualification> qualifications, LocalDate asOf) {
        Map<String, Qualification> best = new HashMap<>();
        for (Qualification q : qualifications) {
            best.merge(q.key, q, (current, candidate) -> {
                boolean currentExpired = current.isExpired(asOf);
                boolean candidateExpired = candidate.isExpired(asOf);
                if (currentExpired != candidateExpired) {
                    return currentExpired ? candidate : current;
                }
                return candidate.level > current.level ? candidate : current;
            });
        }
        return best;
    }

    static String normalise(String name) {
        return name.trim().toLowerCase(Locale.ROOT);
    }

    // ---------------------------------------------------------------------------------------------
    // Parsing and validation. One pass does both, so validate() and run() cannot drift apart.

    static final class Request {
        final String companyName;
        final String projectName;
        final List<Qualification> qualifications;
        final List<Requirement> requirements;
        final LocalDate asOf;
        final int simulateMs;

        Request(
                String companyName,
                String projectName,
                List<Qualification> qualifications,
                List<Requirement> requirements,
                LocalDate asOf,
                int simulateMs) {
            this.companyName = companyName;
            this.projectName = projectName;
            this.qualifications = qualifications;
            this.requirements = requirements;
            this.asOf = asOf;
            this.simulateMs = simulateMs;
        }
    }

    static final class Qualification {
        final String key;
        final int level;
        final LocalDate expires;

        Qualification(String key, int level, LocalDate expires) {
            this.key = key;
            this.level = level;
            this.expires = expires;
        }

        boolean isExpired(LocalDate asOf) {
            return asOf != null && expires != null && expires.isBefore(asOf);
        }
    }

    static final class Requirement {
        final String name;
        final String key;
        final int minLevel;
        final BigDecimal weight;
        final Number weightAsGiven;
        final boolean mandatory;

        Requirement(String name, int minLevel, BigDecimal weight, Number weightAsGiven, boolean mandatory) {
            this.name = name;
            this.key = normalise(name);
            this.minLevel = minLevel;
            this.weight = weight;
            this.weightAsGiven = weightAsGiven;
            this.mandatory = mandatory;
        }
    }

    static Request parse(JsonObject payload) throws InvalidPayloadException {
        if (payload == null) {
            throw new InvalidPayloadException("payload must be a JSON object");
        }
        JsonObject company = requireObject(payload.getValue("company"), "company");
        JsonObject project = requireObject(payload.getValue("project"), "project");
        String companyName = requireName(company.getValue("name"), "company.name");
        String projectName = requireName(project.getValue("name"), "project.name");

        JsonArray qualArray = requireArray(company.getValue("qualifications"), "company.qualifications");
        List<Qualification> qualifications = new ArrayList<>(qualArray.size());
        for (int i = 0; i < qualArray.size(); i++) {
            String field = "company.qualifications[" + i + "]";
            JsonObject q = requireObject(qualArray.getValue(i), field);
            String name = requireName(q.getValue("name"), field + ".name");
            int level = requireLevel(q.getValue("level"), field + ".level");
            LocalDate expires = optionalDate(q.getValue("expires"), field + ".expires");
            qualifications.add(new Qualification(normalise(name), level, expires));
        }

        JsonArray reqArray = requireArray(project.getValue("requirements"), "project.requirements");
        List<Requirement> requirements = new ArrayList<>(reqArray.size());
        for (int i = 0; i < reqArray.size(); i++) {
            String field = "project.requirements[" + i + "]";
            JsonObject r = requireObject(reqArray.getValue(i), field);
            String name = requireName(r.getValue("name"), field + ".name");
            Object minLevelValue = r.getValue("minLevel");
            int minLevel = minLevelValue == null ? 1 : requireLevel(minLevelValue, field + ".minLevel");
            Object weightValue = r.getValue("weight");
            BigDecimal weight = BigDecimal.ONE;
            Number weightAsGiven = 1;
            if (weightValue != null) {
                weight = requireWeight(weightValue, field + ".weight");
                weightAsGiven = (Number) weightValue;
            }
            Object mandatoryValue = r.getValue("mandatory");
            boolean mandatory;
            if (mandatoryValue == null) {
                mandatory = false;
            } else if (mandatoryValue instanceof Boolean) {
                mandatory = (Boolean) mandatoryValue;
            } else {
                throw new InvalidPayloadException(field + ".mandatory must be true or false");
            }
            requirements.add(new Requirement(name, minLevel, weight, weightAsGiven, mandatory));
        }

        LocalDate asOf = optionalDate(payload.getValue("asOf"), "asOf");

        Object simulateValue = payload.getValue("simulateMs");
        int simulateMs = 0;
        if (simulateValue != null) {
            Long ms = integralValue(simulateValue);
            if (ms == null || ms < 0 || ms > MAX_SIMULATE_MS) {
                throw new InvalidPayloadException("simulateMs must be an integer from 0 to " + MAX_SIMULATE_MS);
            }
            simulateMs = ms.intValue();
        }

        return new Request(
                companyName, projectName, List.copyOf(qualifications), List.copyOf(requirements), asOf, simulateMs);
    }

    private static JsonObject requireObject(Object value, String field) throws InvalidPayloadException {
        if (value instanceof JsonObject) {
            return (JsonObject) value;
        }
        throw new InvalidPayloadException(field + (value == null ? " is required and" : "") + " must be a JSON object");
    }

    private static JsonArray requireArray(Object value, String field) throws InvalidPayloadException {
        if (!(value instanceof JsonArray)) {
            throw new InvalidPayloadException(field + (value == null ? " is required and" : "") + " must be an array");
        }
        JsonArray array = (JsonArray) value;
        if (array.size() > MAX_ENTRIES) {
            throw new InvalidPayloadException(
                    field + " must have at most " + MAX_ENTRIES + " entries, got " + array.size());
        }
        return array;
    }

    private static String requireName(Object value, String field) throws InvalidPayloadException {
        // A blank name could never match anything, so it is refused rather than silently scored 0.
        if (value instanceof String && !((String) value).isBlank()) {
            return (String) value;
        }
        throw new InvalidPayloadException(
                field + (value == null ? " is required and" : "") + " must be a non-blank string");
    }

    private static int requireLevel(Object value, String field) throws InvalidPayloadException {
        Long level = integralValue(value);
        if (level == null || level < 0 || level > MAX_LEVEL) {
            throw new InvalidPayloadException(field + " must be an integer from 0 to " + MAX_LEVEL);
        }
        return level.intValue();
    }

    private static BigDecimal requireWeight(Object value, String field) throws InvalidPayloadException {
        BigDecimal weight = decimalValue(value);
        if (weight == null || weight.signum() <= 0) {
            throw new InvalidPayloadException(field + " must be a positive number");
        }
        return weight;
    }

    private static LocalDate optionalDate(Object value, String field) throws InvalidPayloadException {
        if (value == null) {
            return null;
        }
        if (value instanceof String) {
            try {
                return LocalDate.parse((String) value);
            } catch (DateTimeParseException e) {
                // fall through to the common message
            }
        }
        throw new InvalidPayloadException(field + " must be an ISO date (yyyy-mm-dd), got " + value);
    }

    /** The value as a long if it is a JSON number with no fractional part, else null. */
    private static Long integralValue(Object value) {
        BigDecimal decimal = decimalValue(value);
        if (decimal == null) {
            return null;
        }
        try {
            return decimal.stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            return null;
        }
    }

    /** The exact decimal value of a finite JSON number, else null. */
    private static BigDecimal decimalValue(Object value) {
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return BigDecimal.valueOf(((Number) value).longValue());
        }
        if (value instanceof BigInteger) {
            return new BigDecimal((BigInteger) value);
        }
        if (value instanceof BigDecimal) {
            return (BigDecimal) value;
        }
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            // valueOf uses the shortest decimal form, so a weight of 0.1 is 0.1 and not 0.1000000000000000055...
            return Double.isFinite(d) ? BigDecimal.valueOf(d) : null;
        }
        return null;
    }
}
