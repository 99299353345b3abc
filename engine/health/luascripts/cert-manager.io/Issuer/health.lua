-- Health of a cert-manager Issuer, from its Ready condition.

local function messageOf(c, default)
  if type(c.message) == "string" and c.message ~= "" then
    return c.message
  end
  if type(c.reason) == "string" and c.reason ~= "" then
    return default .. ": " .. c.reason
  end
  return default
end

if obj.status ~= nil and type(obj.status.conditions) == "table" then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "True" then
        return {status = "Healthy", message = messageOf(c, "Issuer is ready")}
      end
      if c.status == "False" then
        return {status = "Degraded", message = messageOf(c, "Issuer is not ready")}
      end
      return {status = "Progressing", message = messageOf(c, "Initializing issuer")}
    end
  end
end

return {status = "Progressing", message = "Initializing issuer"}
