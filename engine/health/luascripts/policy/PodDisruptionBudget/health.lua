-- Health of a PodDisruptionBudget.
--   no status / spec not yet observed      -> Progressing
--   currentHealthy >= desiredHealthy       -> Healthy
--   currentHealthy <  desiredHealthy       -> Degraded

local function count(v)
  local n = tonumber(v)
  if n == nil then
    return 0
  end
  return n
end

local function fmt(n)
  return string.format("%d", n)
end

local status = obj.status
if status == nil then
  return {status = "Progressing", message = "Waiting for PodDisruptionBudget status"}
end

local meta = obj.metadata or {}
local observed = tonumber(status.observedGeneration)
local generation = tonumber(meta.generation)
if observed ~= nil and generation ~= nil and observed < generation then
  return {status = "Progressing", message = "Waiting for PodDisruptionBudget spec update to be observed"}
end

local current = count(status.currentHealthy)
local desired = count(status.desiredHealthy)
local allowed = count(status.disruptionsAllowed)

if current >= desired then
  local noun = "disruptions"
  if allowed == 1 then
    noun = "disruption"
  end
  return {status = "Healthy", message = fmt(current) .. " healthy pods, " .. fmt(desired) .. " required; "
      .. fmt(allowed) .. " " .. noun .. " allowed"}
end

return {status = "Degraded", message = "Insufficient healthy pods: " .. fmt(current) .. " healthy, "
    .. fmt(desired) .. " required"}
